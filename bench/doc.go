// Package bench measures gtrain against ceilings taken on the same machine in
// the same run (SPEC §8): every figure is a ratio, never a timed unit test.
// `make bench` runs cmd/, which prints a table and writes bench/results.json.
//
// It uses the real parts (pserver shards over gRPC on loopback, the master's
// core over an embedded etcd) and must not be imported by production code.
package bench

// Result is one row of bench/results.json.
type Result struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Ceiling float64 `json:"ceiling"`
	Ratio   float64 `json:"ratio"`
	Note    string  `json:"note,omitempty"`
}

func ratio(v, c float64) float64 {
	if c == 0 {
		return 0
	}
	return v / c
}
