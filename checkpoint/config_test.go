package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	good.Dir = "/tmp/x"
	if err := good.Validate(); err != nil {
		t.Fatalf("default config with Dir: %v", err)
	}
	if DefaultConfig().Keep != 3 {
		t.Fatalf("default Keep = %d, want 3", DefaultConfig().Keep)
	}
	cases := []struct {
		field string
		edit  func(*Config)
	}{
		{"Dir", func(c *Config) { c.Dir = "" }},
		{"Keep", func(c *Config) { c.Keep = 0 }},
		{"Index", func(c *Config) { c.Index = -1 }},
	}
	for _, tc := range cases {
		c := good
		tc.edit(&c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("bad %s: err = %v, want ErrInvalidConfig naming %s", tc.field, err, tc.field)
		}
	}
}

func TestNewStoreRejectsBadInput(t *testing.T) {
	if _, err := NewStore(Config{Keep: 1}, NewMemRecorder(), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("empty Dir: err = %v", err)
	}
	if _, err := NewStore(Config{Dir: t.TempDir(), Keep: 1}, nil, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil recorder: err = %v", err)
	}
}

func TestFileNames(t *testing.T) {
	if got := fileName(2, 123); got != "pserver-2-step-0000000123.ckpt" {
		t.Fatalf("fileName = %q", got)
	}
	for _, tc := range []struct {
		name  string
		index int
		step  int64
		ok    bool
	}{
		{"pserver-2-step-0000000123.ckpt", 2, 123, true},
		{"pserver-2-step-12345678901.ckpt", 2, 12345678901, true},
		{"pserver-12-step-0000000123.ckpt", 2, 0, false},
		{"pserver-2-step-0000000123.ckpt", 12, 0, false},
		{"pserver-2-step-123.ckpt", 2, 0, false},
		{"pserver-2-step-+000000123.ckpt", 2, 0, false},
		{"pserver-2-step-0000000123.ckpt.tmp-1", 2, 0, false},
		{".pserver-2-step-0000000123.ckpt.tmp-77", 2, 0, false},
	} {
		step, ok := parseFileName(tc.name, tc.index)
		if ok != tc.ok || step != tc.step {
			t.Errorf("parseFileName(%q, %d) = %d, %v; want %d, %v", tc.name, tc.index, step, ok, tc.step, tc.ok)
		}
	}
	if !isTempFor(".pserver-2-step-0000000123.ckpt.tmp-77", 2) || isTempFor(".pserver-2-step-0000000123.ckpt.tmp-77", 1) {
		t.Fatal("isTempFor does not tell temp files of index 2 apart")
	}
}
