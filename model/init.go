package model

import (
	"fmt"
	"math"
)

// linearInitLimit bounds the initial weights of linear and softmax models.
const linearInitLimit = 0.01

// InitRange fills dst with elements [offset, offset+len(dst)) of parameter
// param of m, exactly as m.Init would, so that a pserver holding a slice of a
// parameter can initialise it alone. It panics if the range is outside the
// parameter.
func InitRange(m Model, seed uint64, param, offset int, dst []float32) {
	ps := m.Params()
	if param < 0 || param >= len(ps) {
		panic(fmt.Sprintf("model: InitRange: param %d out of range [0, %d)", param, len(ps)))
	}
	if size := ps[param].Size(); offset < 0 || offset+len(dst) > size {
		panic(fmt.Sprintf("model: InitRange: range [%d, %d) outside param %q of size %d",
			offset, offset+len(dst), ps[param].Name, size))
	}
	fillUniform(seed, param, offset, initLimit(m.Spec(), ps[param]), dst)
}

// initLimit is the half-width of the uniform distribution param starts from;
// 0 means it starts at zero (biases).
func initLimit(s Spec, p ParamSpec) float64 {
	if len(p.Shape) != 2 {
		return 0
	}
	if s.Kind != KindMLP {
		return linearInitLimit
	}
	fanIn, fanOut := p.Shape[0], p.Shape[1]
	return math.Sqrt(6 / float64(fanIn+fanOut)) // Glorot/Xavier uniform
}

func fillUniform(seed uint64, param, offset int, limit float64, dst []float32) {
	if limit == 0 {
		clear(dst)
		return
	}
	for k := range dst {
		dst[k] = uniformAt(seed, param, offset+k, limit)
	}
}

// uniformAt is the value of element index of param: uniform in [-limit, limit).
func uniformAt(seed uint64, param, index int, limit float64) float32 {
	return scaleToRange(unitInterval(hash3(seed, uint64(param), uint64(index))), limit)
}

// scaleToRange maps u in [0, 1) to a float32 in [-limit, limit).
func scaleToRange(u, limit float64) float32 {
	v := float32(-limit + 2*limit*u)
	if float64(v) >= limit { // float32 rounding can reach the open bound
		v = math.Nextafter32(v, 0)
	}
	return v
}

// hash3 is a counter-based hash of (seed, param, index): chained splitmix64
// finalisers, so values need no RNG state and any subset is computable alone.
func hash3(seed, param, index uint64) uint64 {
	h := splitmix64(seed)
	h = splitmix64(h ^ param)
	return splitmix64(h ^ index)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitInterval maps the top 53 bits of h to [0, 1).
func unitInterval(h uint64) float64 {
	return float64(h>>11) * 0x1p-53
}
