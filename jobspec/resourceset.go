package jobspec

import (
	"fmt"
	"strconv"
	"strings"
)

// SetResource sets one of the spec's resources from text, as `gctl job
// resume --resources trainer.cpu=2,pserver.memory=2Gi` gives them: path is
// ROLE.KEY (trainer or pserver; cpu, memory or gpu). It returns the old
// value in words; the value's own limits are Validate's. A path or a value
// of the wrong type is a FieldError naming resources.PATH.
func (s *Spec) SetResource(path, value string) (old string, err error) {
	field := "resources." + path
	role, key, _ := strings.Cut(path, ".")
	var r *Resource
	switch role {
	case "trainer":
		r = &s.Resources.Trainer
	case "pserver":
		r = &s.Resources.Pserver
	default:
		return "", fieldError(field, "names no role: give trainer.KEY or pserver.KEY", nil)
	}
	switch key {
	case "cpu":
		v, perr := strconv.ParseFloat(value, 64)
		if perr != nil {
			return "", fieldError(field, fmt.Sprintf("%q is not a number of cores (e.g. 2 or 0.5)", value), perr)
		}
		old, r.CPU = strconv.FormatFloat(r.CPU, 'g', -1, 64), v
	case "memory":
		old, r.Memory = r.Memory, value
	case "gpu":
		v, perr := strconv.Atoi(value)
		if perr != nil {
			return "", fieldError(field, fmt.Sprintf("%q is not a whole number of GPUs", value), perr)
		}
		old, r.GPU = strconv.Itoa(r.GPU), v
	default:
		return "", fieldError(field, "names no resource: give cpu, memory or gpu", nil)
	}
	if old == "" {
		old = "(unset)"
	}
	return old, nil
}
