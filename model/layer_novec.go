//go:build !(goexperiment.simd && amd64)

package model

// Without GOEXPERIMENT=simd (or off amd64) the scalar loops do all the work.

func reluVec(m []float32) int                        { return 0 }
func maskInactiveVec(grad, activation []float32) int { return 0 }
func addVec(dst, src []float32) int                  { return 0 }

func hasVectors() bool { return false }
