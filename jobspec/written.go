package jobspec

import (
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// Fields whose written value must be a whole number of at least 1 (docs/reference.md#job-spec
// counts). ApplyDefaults fills a zero, and the YAML decoder truncates 3.5 to
// 3 for an int, so both must be caught on the document, before decoding:
// after it "passes: 0" and an omitted passes look the same.
var countFields = []string{"trainers", "pservers", "passes", "batch_size", "global_batch",
	"data.chunks_per_task", "checkpoint.keep"}

// Fields whose written value must be a number above 0: a written 0 would
// otherwise become the default (0.01, 1e-8) without a word.
var positiveFields = []string{"optimizer.learning_rate", "optimizer.epsilon"}

// checkWritten rejects a count written as 0, negative or fractional, and a
// learning rate or epsilon written as 0 or less, naming the field and line.
// A value that is not a number at all is left to the decoder, whose message
// names the type. Omitted fields are not checked: they get their defaults.
func checkWritten(data []byte) error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) != 1 {
		return nil // the decoder reports what is wrong with the document
	}
	for _, field := range countFields {
		if err := checkCount(field, lookup(root.Content[0], field)); err != nil {
			return err
		}
	}
	for _, field := range positiveFields {
		if n := lookup(root.Content[0], field); n != nil {
			if v, ok := number(n); ok && !(v > 0) {
				return fieldError(field, fmt.Sprintf("line %d: must be a number > 0, got %s (leave the field out for the default)", n.Line, n.Value), nil)
			}
		}
	}
	return nil
}

func checkCount(field string, n *yaml.Node) *FieldError {
	if n == nil {
		return nil
	}
	v, ok := number(n)
	switch {
	case !ok:
		return nil
	case v != math.Trunc(v):
		return fieldError(field, fmt.Sprintf("line %d: must be a whole number, got %s", n.Line, n.Value), nil)
	case v < 1:
		return fieldError(field, fmt.Sprintf("line %d: must be at least 1, got %s (leave the field out for the default)", n.Line, n.Value), nil)
	}
	return nil
}

// lookup finds the value node of a dotted field path in a mapping; nil when
// any part is absent or not a mapping.
func lookup(n *yaml.Node, path string) *yaml.Node {
	for _, key := range strings.Split(path, ".") {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// number reads a scalar node as YAML reads a number; false when it is not
// one (a string, a mapping), which the decoder then reports.
func number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, false
	}
	var v float64
	if n.Decode(&v) != nil {
		return 0, false
	}
	return v, true
}
