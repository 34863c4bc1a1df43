package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/rolecfg"
)

// Every line of a role names its role, job and index once each (the master
// has no index).
func TestRoleLoggerNamesTheRoleOnce(t *testing.T) {
	tests := []struct {
		worker string
		want   string
	}{
		{"master", "role=master job=fit step=3"},
		{"pserver-1", "role=pserver job=fit index=1 step=3"},
		{"trainer-2", "role=trainer job=fit index=2 step=3"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		roleLogger(&out, rolecfg.Args{Worker: tt.worker, Job: "fit"}).Info("hello", "step", 3)
		line := strings.TrimSpace(out.String())
		if _, attrs, _ := strings.Cut(line, "msg=hello "); attrs != tt.want {
			t.Errorf("%s logs %q, want the attributes %q", tt.worker, line, tt.want)
		}
	}
}

// A role reads the etcd password from --etcd-password-file over the
// environment's; an unreadable file is bad usage.
func TestReadEtcdPassword(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etcd-password")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := rolecfg.Args{EtcdPasswordFile: path}
	a.Etcd.Password = "from-env"
	if err := readEtcdPassword(&a); err != nil || a.Etcd.Password != "s3cret" {
		t.Errorf("password %q, %v; want s3cret from the file", a.Etcd.Password, err)
	}
	a.EtcdPasswordFile = path + ".missing"
	if err := readEtcdPassword(&a); !errors.Is(err, errUsage) {
		t.Errorf("a missing file: %v, want a usage error", err)
	}
}
