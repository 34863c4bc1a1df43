//go:build !(goexperiment.simd && amd64)

package pserver

// Without GOEXPERIMENT=simd (or off amd64) the scalar loops do all the work.

func sgdVec(p, g []float32, lr float32) int                               { return 0 }
func momentumVec(p, g, v []float32, lr, mu float32) int                   { return 0 }
func adagradVec(p, g, a []float32, lr, eps float32) int                   { return 0 }
func adamVec(p, g, m, v []float32, b1, b2, c1, c2, lrT, epsT float32) int { return 0 }
func finiteVec(v []float32) int                                           { return 0 }
func scaleVec(v []float32, k float32) int                                 { return 0 }
