package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// lossHead scores the output layer's pre-activation z against the labels.
// It returns the sum of per-record losses and the number of correct
// predictions; when delta is not nil it also writes dLoss_r/dz into it.
type lossHead interface {
	score(z *mat.Dense, labels []float64, delta *mat.Dense) (lossSum float64, correct int)
}

// squaredError is (y - ŷ)² per record, without the ½ (SPEC §5), for a single
// regression output. It never counts anything as correct.
type squaredError struct{}

func (squaredError) score(z *mat.Dense, labels []float64, delta *mat.Dense) (float64, int) {
	var lossSum float64
	for r, y := range labels {
		diff := z.At(r, 0) - y
		lossSum += diff * diff
		if delta != nil {
			delta.Set(r, 0, 2*diff)
		}
	}
	return lossSum, 0
}

// crossEntropy is -log softmax(z)[label] per record, computed through
// log-sum-exp so that huge logits neither overflow nor lose the gradient.
type crossEntropy struct{}

func (crossEntropy) score(z *mat.Dense, labels []float64, delta *mat.Dense) (float64, int) {
	var lossSum float64
	correct := 0
	_, classes := z.Dims()
	for r, y := range labels {
		class, err := classIndex(y, classes)
		if err != nil {
			panic(fmt.Errorf("model: record %d: %w", r, err))
		}
		logits := z.RawRowView(r)
		lse := floats.LogSumExp(logits)
		lossSum += lse - logits[class]
		if floats.MaxIdx(logits) == class {
			correct++
		}
		if delta != nil {
			d := delta.RawRowView(r)
			for k, v := range logits {
				d[k] = math.Exp(v - lse)
			}
			d[class]--
		}
	}
	return lossSum, correct
}
