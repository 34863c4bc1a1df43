package jobspec

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxIndexedNodes bounds the walk over a document that failed to decode,
// which may be an alias bomb.
const maxIndexedNodes = 100000

// fieldIndex maps a YAML document onto Spec's fields: the first key that no
// field takes, and for each line the field paths whose values sit on it (yaml
// reports type errors by line only).
type fieldIndex struct {
	unknown *FieldError
	byLine  map[int][]located
	budget  int
}

// located is a field path and the text of its value, when a scalar.
type located struct{ path, value string }

func indexFields(data []byte) *fieldIndex {
	idx := &fieldIndex{byLine: map[int][]located{}, budget: maxIndexedNodes}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil {
		idx.walk(&root, reflect.TypeFor[Spec](), "")
	}
	return idx
}

func (idx *fieldIndex) walk(node *yaml.Node, t reflect.Type, path string) {
	if idx.budget <= 0 {
		return
	}
	idx.budget--
	switch node.Kind {
	case yaml.DocumentNode:
		for _, c := range node.Content {
			idx.walk(c, t, path)
		}
		return
	case yaml.AliasNode:
		if node.Alias != nil {
			idx.walk(node.Alias, t, path)
		}
		return
	}
	if path != "" {
		idx.byLine[node.Line] = append(idx.byLine[node.Line], located{path, node.Value})
	}
	switch {
	case t.Kind() == reflect.Struct && node.Kind == yaml.MappingNode:
		idx.walkMapping(node, t, path)
	case t.Kind() == reflect.Slice && node.Kind == yaml.SequenceNode:
		for i, c := range node.Content {
			idx.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func (idx *fieldIndex) walkMapping(node *yaml.Node, t reflect.Type, path string) {
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if key.Tag == "!!merge" {
			idx.walk(value, t, path)
			continue
		}
		field, ok := fieldByYAMLName(t, key.Value)
		if !ok {
			idx.noteUnknown(key, t, path)
			continue
		}
		idx.walk(value, field.Type, joinPath(path, key.Value))
	}
}

func (idx *fieldIndex) noteUnknown(key *yaml.Node, t reflect.Type, path string) {
	if idx.unknown != nil {
		return
	}
	known := yamlNames(t)
	owner := path
	if owner == "" {
		owner = "a job spec"
	}
	msg := fmt.Sprintf("line %d: unknown field; %s takes %s", key.Line, owner, strings.Join(known, ", "))
	if guess := closestName(key.Value, known); guess != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", guess)
	}
	idx.unknown = fieldError(joinPath(path, key.Value), msg, nil)
}

var (
	lineMessage  = regexp.MustCompile(`^line (\d+): (.*)$`)
	quotedScalar = regexp.MustCompile("`([^`]*)`")
)

// annotate rewrites "line 4: cannot unmarshal ..." as
// "trainers (line 4): cannot unmarshal ...".
func (idx *fieldIndex) annotate(messages []string) string {
	out := make([]string, 0, len(messages))
	for _, msg := range messages {
		m := lineMessage.FindStringSubmatch(msg)
		if m == nil {
			out = append(out, msg)
			continue
		}
		line, _ := strconv.Atoi(m[1])
		paths := leaves(idx.byLine[line], quotedScalar.FindStringSubmatch(m[2]))
		switch len(paths) {
		case 0:
			out = append(out, msg)
		case 1:
			out = append(out, fmt.Sprintf("%s (line %d): %s", paths[0], line, m[2]))
		default:
			out = append(out, fmt.Sprintf("one of %s (line %d): %s", strings.Join(paths, ", "), line, m[2]))
		}
	}
	return strings.Join(out, "; ")
}

// leaves drops the paths that are a prefix of another path on the same line
// ("resources.trainer" when "resources.trainer.cpu" is there too). When the
// message quotes the offending value and exactly one leaf holds it, that leaf
// alone is the answer.
func leaves(fields []located, quoted []string) []string {
	var out []string
	var holders []string
	for _, f := range fields {
		isPrefix := slices.ContainsFunc(fields, func(g located) bool {
			return strings.HasPrefix(g.path, f.path+".") || strings.HasPrefix(g.path, f.path+"[")
		})
		if isPrefix || slices.Contains(out, f.path) {
			continue
		}
		out = append(out, f.path)
		if quoted != nil && f.value == quoted[1] {
			holders = append(holders, f.path)
		}
	}
	if len(holders) == 1 {
		return holders
	}
	return out
}

func fieldByYAMLName(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if n := yamlName(f); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	return names
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// closestName finds the known name a typo most likely meant: the same letters
// ignoring case, '_' and '-' ("batchSize" -> "batch_size").
func closestName(name string, known []string) string {
	normalize := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	for _, k := range known {
		if normalize(k) == normalize(name) {
			return k
		}
	}
	return ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
