package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every line of a role names its role, job and index once each (the master
// has no index).
func TestRoleLoggerNamesTheRoleOnce(t *testing.T) {
	tests := []struct {
		role  string
		index int
		want  string
	}{
		{"master", 0, "role=master job=fit step=3"},
		{"pserver", 1, "role=pserver job=fit index=1 step=3"},
		{"trainer", 2, "role=trainer job=fit index=2 step=3"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		roleLogger(&out, tt.role, roleFlags{job: "fit", index: tt.index}).Info("hello", "step", 3)
		line := strings.TrimSpace(out.String())
		if _, attrs, _ := strings.Cut(line, "msg=hello "); attrs != tt.want {
			t.Errorf("%s logs %q, want the attributes %q", tt.role, line, tt.want)
		}
	}
}
