package jobspec

import (
	"errors"
	"strings"
	"testing"
)

func longName(n int) string { return strings.Repeat("a", n) }

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		ok      bool
		problem string
	}{
		{"fit-a-line", true, ""},
		{"a", true, ""},
		{"7", true, ""},
		{"Job.v2-3", true, ""},
		{"a.b", true, ""},
		{longName(63), true, ""},
		{"", false, "empty"},
		{"a_b", false, "contains '_'"},
		{"-a", false, "starts with '-'"},
		{"a-", false, "ends with '-'"},
		{".a", false, "starts with '.'"},
		{"a.", false, "ends with '.'"},
		{"-", false, "starts with '-'"},
		{longName(64), false, "64 characters"},
		{"a b", false, "contains ' '"},
		{"a/b", false, "contains '/'"},
		{"café", false, "contains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateName(tt.name)
			if tt.ok {
				if err != nil {
					t.Errorf("ValidateName(%q) = %v, want nil", tt.name, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("ValidateName(%q) = %v, want ErrInvalidName", tt.name, err)
			}
			msg := err.Error()
			for _, want := range []string{tt.problem, "63 characters", "'-' and '.'", "letter or digit", "no '_'"} {
				if !strings.Contains(msg, want) {
					t.Errorf("ValidateName(%q) = %q, want it to mention %q", tt.name, msg, want)
				}
			}
			if tt.name != "" && !strings.Contains(msg, `"`+tt.name+`"`) {
				t.Errorf("ValidateName(%q) = %q does not quote the name", tt.name, msg)
			}
		})
	}
}
