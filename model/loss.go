package model

import (
	"fmt"
	"math"
)

// lossHead scores the output layer's pre-activation z (rows × outputs,
// float32) against the labels. It returns the sum of per-record losses
// (accumulated in float64, record after record) and the number of correct
// predictions; when delta is not nil it also writes dLoss_r/dz into it.
type lossHead interface {
	score(z []float32, outputs int, labels []float32, delta []float32) (lossSum float64, correct int)
}

// squaredError is (y - ŷ)² per record, without the ½
// (docs/reference.md#job-status-json, metrics.train_loss), for a single
// regression output. It never counts anything as correct.
type squaredError struct{}

func (squaredError) score(z []float32, _ int, labels []float32, delta []float32) (float64, int) {
	var lossSum float64
	for r, y := range labels {
		diff := float64(z[r]) - float64(y)
		lossSum += diff * diff
		if delta != nil {
			delta[r] = float32(2 * diff)
		}
	}
	return lossSum, 0
}

// crossEntropy is -log softmax(z)[label] per record, computed in float64
// through log-sum-exp so that huge logits neither overflow nor lose the
// gradient. The head is rows×outputs work against the layers'
// rows×width×width: float64 here costs nothing measurable.
type crossEntropy struct{}

func (crossEntropy) score(z []float32, classes int, labels []float32, delta []float32) (float64, int) {
	var lossSum float64
	correct := 0
	for r, y := range labels {
		class, err := classIndex(y, classes)
		if err != nil {
			panic(fmt.Errorf("model: record %d: %w", r, err))
		}
		logits := z[r*classes : (r+1)*classes]
		lse, best := logSumExp(logits)
		lossSum += lse - float64(logits[class])
		if best == class {
			correct++
		}
		if delta != nil {
			d := delta[r*classes : (r+1)*classes]
			for k, v := range logits {
				d[k] = float32(math.Exp(float64(v) - lse))
			}
			d[class]--
		}
	}
	return lossSum, correct
}

// logSumExp returns log Σ exp(v) and the index of the largest value (the
// first one on ties, as argmax).
func logSumExp(v []float32) (float64, int) {
	best := 0
	for k, x := range v {
		if x > v[best] {
			best = k
		}
	}
	top := float64(v[best])
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return top, best
	}
	var sum float64
	for _, x := range v {
		sum += math.Exp(float64(x) - top)
	}
	return top + math.Log(sum), best
}
