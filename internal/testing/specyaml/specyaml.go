package specyaml

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gtrain/gtrain/jobspec"
)

// Marshal is s as a job spec document. Parsing it gives s back (after
// the defaults jobspec applies to the fields left out).
func Marshal(s jobspec.Spec) string {
	root := mapping(reflect.ValueOf(s))
	setBounds(root, "trainers", s.Trainers, s.TrainersMin, s.TrainersMax)
	setBounds(root, "pservers", s.Pservers, s.PserversMin, s.PserversMax)
	b, err := yaml.Marshal(root)
	if err != nil { // only for a type the spec cannot hold
		panic(fmt.Sprintf("specyaml: %v", err))
	}
	return string(b)
}

// mapping is the struct v as a YAML mapping of its set fields, in field
// order (the order of the reference's spec).
func mapping(v reflect.Value) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		if n := node(v.Field(i)); n != nil {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, n)
		}
	}
	if len(m.Content) == 0 {
		return nil
	}
	return m
}

// node is the value v, or nil where a spec would leave it out: a zero
// value, a nil pointer (a set pointer is written even when it points to
// zero: shuffle: false, momentum: 0).
func node(v reflect.Value) *yaml.Node {
	switch {
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return scalarOrMore(v.Elem())
	case v.IsZero():
		return nil
	}
	return scalarOrMore(v)
}

func scalarOrMore(v reflect.Value) *yaml.Node {
	if v.Kind() == reflect.Struct { // one line each, as the reference writes them
		m := mapping(v)
		if m != nil {
			m.Style = yaml.FlowStyle
		}
		return m
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		panic(fmt.Sprintf("specyaml: %v", err))
	}
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	return &n
}

// setBounds writes a role's count in the {count, min, max} form when it
// has bounds.
func setBounds(root *yaml.Node, key string, count, lo, hi int) {
	if lo == 0 && hi == 0 {
		return
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			root.Content[i+1] = scalarOrMore(reflect.ValueOf(struct {
				Count int `yaml:"count"`
				Min   int `yaml:"min"`
				Max   int `yaml:"max"`
			}{count, lo, hi}))
			return
		}
	}
}
