package refdoc

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Field is one key of a JSON or YAML document: its path ("trainers[].id"),
// its type in the document's words, and where it sits in the Go value.
type Field struct {
	Path  string
	Type  string
	Index []int // reflect field indexes from the root, for reading defaults
	// Omitted is true when the key is left out of the document when empty.
	Omitted bool
}

// Fields lists every key of a document of Go type t as encoded with the
// struct tag `tag` ("json" or "yaml"), objects before their keys. Fields
// tagged "-" are not in the document and not listed.
func Fields(t reflect.Type, tag string) []Field {
	var out []Field
	walkFields(t, tag, "", nil, &out)
	return out
}

func walkFields(t reflect.Type, tag, prefix string, index []int, out *[]Field) {
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get(tag), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := joinKey(prefix, name)
		idx := append(slices.Clone(index), f.Index...)
		omitted := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		*out = append(*out, Field{Path: path, Type: TypeName(f.Type), Index: idx, Omitted: omitted})
		switch elem := deref(f.Type); {
		case isObject(elem):
			walkFields(elem, tag, path, idx, out)
		case elem.Kind() == reflect.Slice && isObject(deref(elem.Elem())):
			walkFields(deref(elem.Elem()), tag, path+"[]", nil, out)
		}
	}
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var timeType = reflect.TypeFor[time.Time]()

func isObject(t reflect.Type) bool { return t.Kind() == reflect.Struct && t != timeType }

// TypeName is how a document shows a value of Go type t.
func TypeName(t reflect.Type) string {
	switch {
	case t == timeType:
		return "time (RFC 3339 string)"
	case t.Kind() == reflect.Pointer:
		return TypeName(t.Elem()) + " or null"
	case isObject(t):
		return "object"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array of " + plural(TypeName(t.Elem()))
	case reflect.Map:
		return "object of " + plural(TypeName(t.Elem()))
	}
	panic(fmt.Sprintf("refdoc: no document type for Go type %s", t))
}

func plural(s string) string {
	if strings.HasPrefix(s, "array") {
		return "arrays"
	}
	return s + "s"
}

// JSONTable renders the keys of a JSON document of type t as a table of
// key, type and meaning. Every key must have a meaning in meanings and
// every meaning a key: the error lists the ones that do not, so a field
// added to the type fails the reference test until it is described.
func JSONTable(t reflect.Type, meanings map[string]string) (string, error) {
	fields := Fields(t, "json")
	if err := coverage(fields, meanings); err != nil {
		return "", fmt.Errorf("%s: %w (internal/refdoc/jsondocs.go)", t, err)
	}
	var b strings.Builder
	b.WriteString("| key | type | meaning |\n|---|---|---|\n")
	for _, f := range fields {
		typ := f.Type
		if f.Omitted {
			typ += ", omitted when empty"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Path, typ, cell(meanings[f.Path]))
	}
	return b.String(), nil
}

// coverage reports the fields without an entry in meanings and the entries
// that name no field.
func coverage[V any](fields []Field, meanings map[string]V) error {
	var missing, stale []string
	known := map[string]bool{}
	for _, f := range fields {
		known[f.Path] = true
		if _, ok := meanings[f.Path]; !ok {
			missing = append(missing, f.Path)
		}
	}
	for path := range meanings {
		if !known[path] {
			stale = append(stale, path)
		}
	}
	slices.Sort(stale)
	switch {
	case len(missing) > 0:
		return fmt.Errorf("undocumented keys %s: describe them", strings.Join(missing, ", "))
	case len(stale) > 0:
		return fmt.Errorf("internal/refdoc describes keys the type no longer has: %s", strings.Join(stale, ", "))
	}
	return nil
}
