package jobspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Parse decodes a job spec strictly (unknown fields, duplicate keys, wrong
// types and a second YAML document are rejected with the field and line
// named) and applies the defaults. It does not validate: call Validate.
// Errors wrap ErrInvalidSpec.
func Parse(data []byte) (*Spec, error) {
	data, bounds, err := liftBounds(data)
	if err != nil {
		return nil, err
	}
	if err := checkWritten(data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the document is empty", ErrInvalidSpec)
		}
		return nil, explainDecodeError(data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("%w: after the first document: %v", ErrInvalidSpec, err)
	default:
		return nil, fmt.Errorf("%w: line %d: a second YAML document; a job spec is one document", ErrInvalidSpec, extra.Line)
	}
	s.setBounds(bounds)
	s.ApplyDefaults()
	return &s, nil
}

// ParseFile reads and parses the spec at path and resolves its relative
// paths against the file's directory. Errors name the file.
func ParseFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading job spec: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("resolving the directory of job spec %s: %w", path, err)
	}
	s.ResolvePaths(dir)
	return s, nil
}

// explainDecodeError turns yaml's messages, which name Go types, into ones
// that name the spec's fields.
func explainDecodeError(data []byte, err error) error {
	var typeErr *yaml.TypeError
	if !errors.As(err, &typeErr) {
		return fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	fields := indexFields(data)
	if fields.unknown != nil {
		return fields.unknown
	}
	return fmt.Errorf("%w: %s", ErrInvalidSpec, fields.annotate(typeErr.Errors))
}
