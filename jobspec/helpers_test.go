package jobspec

import (
	"errors"
	"strings"
	"testing"
)

// validSpec is a spec that passes Validate, for tests to break one field of.
func validSpec(t *testing.T) *Spec {
	t.Helper()
	s, err := Parse([]byte(`
name: fit-a-line
model: {kind: linear, inputs: 13}
data: {train: /data/housing-train-*, test: /data/housing-test-*}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the base spec does not validate: %v", err)
	}
	return s
}

// wantFieldError asserts err is a *FieldError on field whose message
// contains every one of fragments.
func wantFieldError(t *testing.T, err error, field string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one on %s", field)
	}
	if !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("error %q does not wrap ErrInvalidSpec", err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %q (%T) is not a *FieldError", err, err)
	}
	if fe.Field != field {
		t.Errorf("error %q names field %q, want %q", err, fe.Field, field)
	}
	if !strings.HasPrefix(err.Error(), "job spec: "+field+": ") {
		t.Errorf("message %q does not start with %q", err, "job spec: "+field+": ")
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("message %q does not mention %q", err, f)
		}
	}
}

// fieldCase is a piece of YAML added to a base spec, and the field whose
// FieldError it must give ("": the spec is valid).
type fieldCase struct{ yaml, field string }

// parseValidate is Parse, then Validate when that succeeds.
func parseValidate(yaml string) error {
	s, err := Parse([]byte(yaml))
	if err == nil {
		err = s.Validate()
	}
	return err
}

// checkFieldCases runs each case on base: accepted, or refused naming its
// field (wantFieldError).
func checkFieldCases(t *testing.T, base string, cases []fieldCase) {
	t.Helper()
	for _, tc := range cases {
		err := parseValidate(base + tc.yaml)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.yaml, err)
			}
			continue
		}
		wantFieldError(t, err, tc.field)
	}
}
