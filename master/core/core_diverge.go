package core

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gtrain/gtrain/api"
)

// A job diverges when a loss or a parameter stops being a finite number:
// training on only spreads the NaN, and neither the master's state (JSON
// in etcd: meta, history, progress) nor an operator can use it. The core
// then hands out no more work and asks its driver to fail the job with a
// reason that says what to change (Effects.Fail). It never adds a
// non-finite number to its state, so the state stays encodable.

// DivergedReason is the FAILED reason of a job that diverged at step of
// pass: what is not finite, and what to change.
func DivergedReason(pass int, step int64, what string) string {
	return fmt.Sprintf("diverged at pass %d step %d (%s): lower the learning rate", pass, step, what)
}

// Finite reports whether v is neither NaN nor infinite.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// FormatValue writes a number as an operator reads it: "inf", "-inf" and
// "nan" for the non-finite ones.
func FormatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// diverge records the job's first divergence, at step of the current pass;
// later ones keep the first reason.
func (c *Core) diverge(step int64, what string) Effects {
	if c.failed == "" {
		c.failed = DivergedReason(c.meta.Pass, step, what)
		c.log.Error("training diverged; the job fails", "reason", c.failed)
	}
	return Effects{Fail: c.failed}
}

// Failed is the reason the job must end FAILED ("": it need not).
func (c *Core) Failed() string { return c.failed }

// checkLoss diverges the job on a reported loss sum that is not finite (ok
// false): it must not reach the pass's sum.
func (c *Core) checkLoss(step int64, lossSum float64) (Effects, bool) {
	if Finite(lossSum) {
		return Effects{}, true
	}
	return c.diverge(step, "loss "+FormatValue(lossSum)), false
}

// checkMetrics diverges the job on a pass's metrics that are not finite
// (ok false), before they reach the meta, the history or the progress.
func (c *Core) checkMetrics(end PassEnd, m api.Metrics) (Effects, bool) {
	for _, v := range []struct {
		name string
		p    *float64
	}{{"loss", m.TrainLoss}, {"test loss", m.TestLoss}, {"test accuracy", m.TestAccuracy}} {
		if v.p != nil && !Finite(*v.p) {
			return c.diverge(end.Step, v.name+" "+FormatValue(*v.p)), false
		}
	}
	return Effects{}, true
}

// PassDiverged fails the job whose pass-end evaluation found what (a
// parameter) not finite; a pass end voided by a rollback changes nothing.
func (c *Core) PassDiverged(end PassEnd, what string) Effects {
	if c.meta.Epoch != end.Epoch || c.meta.Pass != end.Pass {
		return Effects{}
	}
	return c.diverge(end.Step, what)
}

// PassEndWarning sets what the operator must fix for the pass end under way
// to finish (a model write that fails): the progress record carries it to
// `gctl job status` (warnings) until the pass ends or is rolled back. The
// first text stays, so a retry that fails alike saves nothing.
func (c *Core) PassEndWarning(end PassEnd, what string) Effects {
	if c.meta.Epoch != end.Epoch || c.meta.Pass != end.Pass || what == "" || c.warning != "" {
		return Effects{}
	}
	c.warning = what
	c.progressAt = time.Time{} // shown at the next save
	return Effects{Changed: true}
}

// Warning is the operator's warning of the pass end under way ("": none).
func (c *Core) Warning() string { return c.warning }

// warnings is the progress record's list of warnings.
func (c *Core) warnings() []string {
	if c.warning == "" {
		return nil
	}
	return []string{c.warning}
}
