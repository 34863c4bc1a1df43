package schema

import "encoding/json"

// Decode decodes a record stored in etcd: a T of this package from the
// value of its key (StateRecord from a StateKey, JobRecord from a JobKey…).
func Decode[T any](raw []byte) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}
