package jobspec

import (
	"bytes"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Bounds of an elastic role count (docs/reference.md#job-spec): `trainers: {count: 2, min: 1,
// max: 8}`. A plain number N is count N, min N, max N; the spec then keeps
// min and max at 0 and the accessors answer N.

// TrainerBounds is the [min, max] `gctl job scale --trainers` moves within.
func (s *Spec) TrainerBounds() (lo, hi int) { return bounds(s.Trainers, s.TrainersMin, s.TrainersMax) }

// PserverBounds is TrainerBounds for the pservers.
func (s *Spec) PserverBounds() (lo, hi int) { return bounds(s.Pservers, s.PserversMin, s.PserversMax) }

func bounds(count, lo, hi int) (int, int) {
	if lo == 0 {
		lo = count
	}
	if hi == 0 {
		hi = count
	}
	return lo, hi
}

// validateBounds checks min <= count <= max within the limits.
func (s *Spec) validateBounds() *FieldError {
	for _, r := range []struct {
		field          string
		count, lo, hi  int
		setLo, setHi   bool
		maxOfTheLimits int
	}{
		{"trainers", s.Trainers, 0, 0, s.TrainersMin != 0, s.TrainersMax != 0, MaxTrainers},
		{"pservers", s.Pservers, 0, 0, s.PserversMin != 0, s.PserversMax != 0, MaxPservers},
	} {
		if r.field == "trainers" {
			r.lo, r.hi = s.TrainerBounds()
		} else {
			r.lo, r.hi = s.PserverBounds()
		}
		switch {
		case r.setLo && r.lo < 1:
			return fieldError(r.field+".min", fmt.Sprintf("must be at least 1, got %d", r.lo), nil)
		case r.setHi && r.hi > r.maxOfTheLimits:
			return fieldError(r.field+".max", fmt.Sprintf("%d is over the maximum of %d", r.hi, r.maxOfTheLimits), nil)
		case r.lo > r.hi:
			return fieldError(r.field+".min", fmt.Sprintf("min %d is above max %d", r.lo, r.hi), nil)
		case r.count < r.lo || r.count > r.hi:
			return fieldError(r.field, fmt.Sprintf("count %d is outside [min %d, max %d]", r.count, r.lo, r.hi), nil)
		}
	}
	return nil
}

// roleBounds is the mapping form of a role count.
type roleBounds struct {
	Count, Min, Max int
}

// liftBounds rewrites `trainers: {count, min, max}` (and pservers) in a
// spec document to `trainers: COUNT`, so the strict decoder reads the
// number, and returns the bounds found. A document it cannot read is
// returned as it is, for the decoder to report.
func liftBounds(data []byte) ([]byte, map[string]roleBounds, error) {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return data, nil, nil
	}
	top := root.Content[0]
	found := map[string]roleBounds{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, val := top.Content[i].Value, top.Content[i+1]
		if (key != "trainers" && key != "pservers") || val.Kind != yaml.MappingNode {
			continue
		}
		b, err := readBounds(key, val)
		if err != nil {
			return nil, nil, err
		}
		found[key] = b
		*val = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(b.Count), Line: val.Line, Column: val.Column}
	}
	if len(found) == 0 {
		return data, nil, nil
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	if err := enc.Encode(&root); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	return out.Bytes(), found, nil
}

// readBounds reads {count, min, max}: count is required; min defaults to 1
// and max to count.
func readBounds(field string, n *yaml.Node) (roleBounds, error) {
	b := roleBounds{Min: 1}
	var haveCount, haveMax bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		x, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			return b, fieldError(field+"."+k.Value, fmt.Sprintf("line %d: want a whole number, got %q", v.Line, v.Value), nil)
		}
		switch k.Value {
		case "count":
			b.Count, haveCount = x, true
		case "min":
			b.Min = x
		case "max":
			b.Max, haveMax = x, true
		default:
			return b, fieldError(field+"."+k.Value, fmt.Sprintf("line %d: unknown field; want count, min or max", k.Line), nil)
		}
	}
	if !haveCount {
		return b, fieldError(field+".count", fmt.Sprintf("line %d: is required in the {count, min, max} form", n.Line), nil)
	}
	if !haveMax {
		b.Max = b.Count
	}
	// 0 in the spec means "as count": a bound of 0 must still be rejected.
	if b.Min == 0 {
		b.Min = -1
	}
	if b.Max == 0 {
		b.Max = -1
	}
	return b, nil
}

// setBounds stores the bounds liftBounds found.
func (s *Spec) setBounds(found map[string]roleBounds) {
	if b, ok := found["trainers"]; ok {
		s.TrainersMin, s.TrainersMax = b.Min, b.Max
	}
	if b, ok := found["pservers"]; ok {
		s.PserversMin, s.PserversMax = b.Min, b.Max
	}
}
