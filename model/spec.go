package model

import "fmt"

// Model kinds accepted in Spec.Kind.
const (
	KindLinear  = "linear"
	KindSoftmax = "softmax"
	KindMLP     = "mlp"
	// KindProgram marks parameters computed by a user's program, not by a
	// model of this package: New refuses it, WriteParams and ReadModel take
	// the parameter list as given.
	KindProgram = "program"
)

// Spec describes a built-in model. Outputs is the number of regression
// outputs (linear, mlp with Outputs == 1) or of classes (softmax, mlp with
// Outputs > 1). Hidden lists the hidden layer widths and is for mlp only.
type Spec struct {
	Kind    string
	Inputs  int
	Outputs int
	Hidden  []int
}

// Validate reports the first problem with s, naming the field as it appears
// in a job spec (model.kind, model.inputs, model.outputs, model.hidden[i]).
// Every error wraps ErrInvalidSpec.
func (s Spec) Validate() error {
	switch s.Kind {
	case KindLinear, KindSoftmax, KindMLP:
	default:
		return specError("model.kind", "must be one of %s, %s, %s, got %q", KindLinear, KindSoftmax, KindMLP, s.Kind)
	}
	if s.Inputs <= 0 {
		return specError("model.inputs", "must be > 0, got %d", s.Inputs)
	}
	if s.Outputs <= 0 {
		return specError("model.outputs", "must be > 0, got %d", s.Outputs)
	}
	switch s.Kind {
	case KindLinear:
		if s.Outputs != 1 {
			return specError("model.outputs", "linear supports exactly 1 output for now, got %d", s.Outputs)
		}
	case KindSoftmax:
		if s.Outputs < 2 {
			return specError("model.outputs", "softmax needs at least 2 classes, got %d", s.Outputs)
		}
	}
	if s.Kind != KindMLP && len(s.Hidden) > 0 {
		return specError("model.hidden", "only mlp takes hidden layers, got %v for kind %s", s.Hidden, s.Kind)
	}
	for i, h := range s.Hidden {
		if h <= 0 {
			return specError(fmt.Sprintf("model.hidden[%d]", i), "must be > 0, got %d", h)
		}
	}
	return nil
}

// layerSizes returns the widths of every layer, input first, output last.
func (s Spec) layerSizes() []int {
	sizes := make([]int, 0, len(s.Hidden)+2)
	sizes = append(sizes, s.Inputs)
	sizes = append(sizes, s.Hidden...)
	return append(sizes, s.Outputs)
}

func specError(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), ErrInvalidSpec)
}

// ParamSpec names one parameter tensor and its shape (row-major).
type ParamSpec struct {
	Name  string
	Shape []int
}

// Size is the number of elements of the parameter.
func (p ParamSpec) Size() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// TotalSize is the number of elements of all parameters together.
func TotalSize(ps []ParamSpec) int {
	n := 0
	for _, p := range ps {
		n += p.Size()
	}
	return n
}
