package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestGradientProgressTellsTheTruth: what GradientProgress tells is true
// when told, on 1, 2 and 3 threads. A Partial(j, n) comes with grads[j][:n]
// already holding its final bits, n growing, before Ready(j); every
// parameter is Ready once; and a parameter told Released is read no more:
// overwriting it with NaN right then leaves the gradient bit for bit what
// an undisturbed computation gives.
func TestGradientProgressTellsTheTruth(t *testing.T) {
	spec, params, b, want := progressCase(t, 4)
	for _, threads := range []int{1, 2, 3} {
		m := mustNewWith(t, spec, Options{Threads: threads})
		mine := make([][]float32, len(params))
		for j := range params {
			mine[j] = slices.Clone(params[j])
		}
		got := zeroParams(m)
		var mu sync.Mutex
		told := make([]int, len(got))
		partials, ready, released := 0, make([]int, len(got)), make([]int, len(got))
		p := &Progress{
			Partial: func(j, n int) {
				mu.Lock()
				defer mu.Unlock()
				if n <= told[j] || ready[j] > 0 || !slices.Equal(got[j][:n], want[j][:n]) {
					t.Errorf("threads %d: Partial(%d, %d) after %d (ready %d) or before its values were final", threads, j, n, told[j], ready[j])
				}
				told[j], partials = n, partials+1
			},
			Ready: func(j int) {
				mu.Lock()
				defer mu.Unlock()
				if ready[j]++; !slices.Equal(got[j], want[j]) {
					t.Errorf("threads %d: Ready(%d) before its gradient was final", threads, j)
				}
			},
			Released: func(j int) {
				mu.Lock()
				defer mu.Unlock()
				released[j]++
				for k := range mine[j] {
					mine[j][k] = float32(math.NaN())
				}
			},
		}
		m.GradientProgress(mine, b, got, p)
		for j := range got {
			if ready[j] != 1 || released[j] != 1 {
				t.Errorf("threads %d: parameter %d told ready %d and released %d times; want once each", threads, j, ready[j], released[j])
			}
			if !slices.Equal(got[j], want[j]) {
				t.Errorf("threads %d: parameter %d's gradient differs once released parameters were overwritten", threads, j)
			}
		}
		if told[0] != len(got[0]) || partials < 3 {
			t.Errorf("threads %d: the first weight told in parts up to %d of %d (%d Partial calls); want 3 bands, to the end", threads, told[0], len(got[0]), partials)
		}
	}
}

// TestOverwriteGivesTheBitsOfAddingIntoZeros: a gradient computed with
// Progress.Overwrite over grads full of garbage (the last micro-batch's
// sums, NaNs) has, on 1, 2 and 3 threads, exactly the bits of one added
// into cleared grads, the sign of every zero included; an empty batch
// leaves zeros.
func TestOverwriteGivesTheBitsOfAddingIntoZeros(t *testing.T) {
	spec, params, b, want := progressCase(t, 6)
	for _, threads := range []int{1, 2, 3} {
		m := mustNewWith(t, spec, Options{Threads: threads})
		got := zeroParams(m)
		for j := range got {
			for k := range got[j] {
				got[j][k] = float32(math.NaN())
			}
			got[j][0] = 12345
		}
		m.GradientProgress(params, b, got, &Progress{Overwrite: true})
		for j := range want {
			for k := range want[j] {
				if math.Float32bits(got[j][k]) != math.Float32bits(want[j][k]) {
					t.Fatalf("threads %d: grads[%d][%d] = %v over garbage, %v added into zeros", threads, j, k, got[j][k], want[j][k])
				}
			}
		}
		m.GradientProgress(params, Batch{Inputs: b.Inputs}, got, &Progress{Overwrite: true})
		for j := range got {
			if slices.ContainsFunc(got[j], func(v float32) bool { return math.Float32bits(v) != 0 }) {
				t.Fatalf("threads %d: an empty batch left grads[%d] not +0", threads, j)
			}
		}
	}
}

// progressCase is an MLP whose first weight's gradient comes in 3 bands of
// rows (600 inputs), random parameters and a batch drawn from seed, and
// the gradient one thread computes of them.
func progressCase(t *testing.T, seed uint64) (Spec, [][]float32, Batch, [][]float32) {
	t.Helper()
	spec := Spec{Kind: KindMLP, Inputs: 600, Outputs: 4, Hidden: []int{300, 20}}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	ref := mustNewWith(t, spec, Options{Threads: 1})
	params, b := randomParams(ref, rng), randomBatch(spec, 13, rng)
	want := zeroParams(ref)
	ref.Gradient(params, b, want)
	return spec, params, b, want
}

// TestAwaitStopsBeforeAnyGradient: a forward pass awaits each parameter
// before it first reads it, in the order it reads them, then asks once
// more (-1) before writing a gradient; a false answer at any of those
// stops the computation with Stopped set and every gradient untouched.
func TestAwaitStopsBeforeAnyGradient(t *testing.T) {
	spec := Spec{Kind: KindMLP, Inputs: 6, Outputs: 3, Hidden: []int{5, 4}}
	m := mustNew(t, spec)
	rng := rand.New(rand.NewPCG(4, 5))
	params, b := randomParams(m, rng), randomBatch(spec, 7, rng)
	var asked []int
	p := &Progress{Await: func(j int) bool { asked = append(asked, j); return true }}
	m.GradientProgress(params, b, zeroParams(m), p)
	if fmt.Sprint(asked) != "[0 1 2 3 4 5 -1]" || p.Stopped {
		t.Fatalf("awaited %v (stopped %v); want [0 1 2 3 4 5 -1], not stopped", asked, p.Stopped)
	}
	for _, refuse := range []int{0, 3, -1} {
		grads := zeroParams(m)
		for _, g := range grads {
			for i := range g {
				g[i] = 7
			}
		}
		p := &Progress{Overwrite: true, Await: func(j int) bool { return j != refuse }}
		m.GradientProgress(params, b, grads, p)
		if !p.Stopped {
			t.Errorf("refused %d: Stopped false", refuse)
		}
		for j, g := range grads {
			if i := slices.IndexFunc(g, func(v float32) bool { return v != 7 }); i >= 0 {
				t.Errorf("refused %d: grad %d[%d] written (%v)", refuse, j, i, g[i])
			}
		}
	}
}
