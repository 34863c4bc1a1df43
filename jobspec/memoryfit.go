package jobspec

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/gtrain/gtrain/model"
)

// bytesPerParam is the size of one parameter (float32) in memory.
const bytesPerParam = 4

// MemoryNeed is the least memory a job's processes need for its parameters:
// a pserver holds its share of the parameters plus the optimizer's state
// slots, a trainer a whole copy of the parameters plus their gradient sums,
// the master a copy of the parameters to evaluate the model.
// Buffers, the Go runtime and checkpoint copies come on top; a request should
// leave room for them.
type MemoryNeed struct {
	Params       int64 // parameters (float32) of the model
	Slots        int   // optimizer state vectors per parameter: sgd 0, momentum and adagrad 1, adam 2
	PserverShare int64 // parameters the most loaded pserver holds: ⌈Params / pservers⌉
	Pserver      int64 // bytes: PserverShare × 4 × (1 + Slots)
	Trainer      int64 // bytes: Params × 4 × 2
	Master       int64 // bytes: Params × 4
}

// MemoryNeed computes what the spec's model needs in memory. Figures that
// overflow an int64 saturate at math.MaxInt64. It fails only for a model
// that model.Spec.Validate rejects.
func (s *Spec) MemoryNeed() (MemoryNeed, error) {
	ps, err := s.ParamSpecs()
	if err != nil {
		return MemoryNeed{}, err
	}
	var n MemoryNeed
	for _, p := range ps {
		size := int64(1)
		for _, d := range p.Shape {
			size = satMul(size, int64(d))
		}
		n.Params = satAdd(n.Params, size)
	}
	n.Slots = s.Optimizer.Slots()
	n.PserverShare = n.Params
	if s.Pservers > 1 {
		n.PserverShare = n.Params/int64(s.Pservers) + min(n.Params%int64(s.Pservers), 1)
	}
	n.Pserver = satMul(satMul(n.PserverShare, bytesPerParam), int64(1+n.Slots))
	n.Trainer = satMul(n.Params, 2*bytesPerParam)
	n.Master = satMul(n.Params, bytesPerParam)
	return n, nil
}

// ParamSpecs lists the model's parameters in the pservers' order: a
// built-in model's, or what a program declared at submit (none before).
func (s *Spec) ParamSpecs() ([]model.ParamSpec, error) {
	if s.Model.IsProgram() {
		return s.Model.Declared.ParamSpecs(), nil
	}
	if s.Model.IsRecommender() {
		if len(s.Model.Fields) == 0 {
			return nil, nil // its input width comes with the id fields, at submit
		}
		r, err := model.NewRecommender(s.Model.RecSpec())
		if err != nil {
			return nil, err
		}
		return r.Params(), nil
	}
	m, err := model.New(s.Model.ToModel())
	if err != nil {
		return nil, err
	}
	return m.Params(), nil
}

// validateMemoryFit rejects a stated memory request that cannot hold what
// the process keeps for the parameters: such a job would only crash-loop.
// An unstated request is left to placement, which asks for the need.
func (s *Spec) validateMemoryFit() *FieldError {
	need, err := s.MemoryNeed()
	if err != nil {
		return nil // validateModel reports it
	}
	pserverMsg := fmt.Sprintf("cannot hold a pserver's share of the parameters: the %s model has %d parameters, "+
		"%d pserver(s) hold up to %d each, and %s keeps %d state slot(s) per parameter: %d × %d bytes × %d = %s; "+
		"request at least %s, or spread the parameters over more pservers",
		s.Model.Kind, need.Params, s.Pservers, need.PserverShare, s.Optimizer.Kind, need.Slots,
		need.PserverShare, bytesPerParam, 1+need.Slots, FormatMemory(need.Pserver), FormatMemory(need.Pserver))
	trainerMsg := fmt.Sprintf("cannot hold a trainer's copy of the parameters and their gradients: "+
		"the %s model has %d parameters: %d × %d bytes × 2 = %s; request at least %s",
		s.Model.Kind, need.Params, need.Params, bytesPerParam, FormatMemory(need.Trainer), FormatMemory(need.Trainer))
	for _, c := range []struct {
		field string
		res   Resource
		need  int64
		msg   string
	}{
		{"resources.trainer.memory", s.Resources.Trainer, need.Trainer, trainerMsg},
		{"resources.pserver.memory", s.Resources.Pserver, need.Pserver, pserverMsg},
	} {
		stated, err := c.res.MemoryBytes()
		if err != nil || stated == 0 || stated >= c.need {
			continue
		}
		return fieldError(c.field, fmt.Sprintf("%s (%d bytes) %s", c.res.Memory, stated, c.msg), ErrMemoryTooSmall)
	}
	return nil
}

// FormatMemory writes a byte count in the binary units of MemoryBytes
// ("512Mi", "37.3Gi"), rounding a fraction up to one decimal so that the
// figure is never below the count.
func FormatMemory(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10)
	}
	value, suffix := float64(n), ""
	for _, s := range []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"} {
		if value < unit {
			break
		}
		value, suffix = value/unit, s
	}
	if value == math.Trunc(value) {
		return strconv.FormatFloat(value, 'f', 0, 64) + suffix
	}
	return strconv.FormatFloat(math.Ceil(value*10)/10, 'f', 1, 64) + suffix
}

func satMul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return 0 // sizes are never negative; model.Validate rejects them
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
