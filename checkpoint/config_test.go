package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	good.Dir, good.Identity = "/tmp/x", testID
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
		{"Identity.Job", func(c *Config) { c.Identity.Job = "" }},
		{"Identity.Job", func(c *Config) { c.Identity.Job = "a_b" }},
		{"Identity.Job", func(c *Config) { c.Identity.Job = "../x" }},
		{"Identity.Job", func(c *Config) { c.Identity.Job = ".x" }},
		{"Identity.Rev", func(c *Config) { c.Identity.Rev = 0 }},
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
	if _, err := NewStore(Config{Identity: testID, Dir: t.TempDir(), Keep: 1}, nil, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil recorder: err = %v", err)
	}
}

func TestConfigOwner(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		owner string
		valid bool
	}{
		{Config{Index: 0}, "pserver-0", true},
		{Config{Index: 12}, "pserver-12", true},
		{Config{Index: 0, Owner: "master"}, "master", true},
		{Config{Index: 3, Owner: "eval_2-b"}, "eval_2-b", true},
		{Config{Owner: "../x"}, "../x", false},
		{Config{Owner: ".hidden"}, ".hidden", false},
		{Config{Owner: "a b"}, "a b", false},
		{Config{Owner: "é"}, "é", false},
	} {
		if got := tc.cfg.OwnerName(); got != tc.owner {
			t.Errorf("%+v: OwnerName = %q, want %q", tc.cfg, got, tc.owner)
		}
		c := tc.cfg
		c.Dir, c.Keep, c.Identity = "/tmp/x", 1, testID
		if err := c.Validate(); (err == nil) != tc.valid || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("%+v: Validate = %v, want valid %v", tc.cfg, err, tc.valid)
		}
	}
}

func TestFileNames(t *testing.T) {
	for owner, want := range map[string]string{"pserver-2": "pserver-2-step-0000000123.ckpt", "master": "master-step-0000000123.ckpt"} {
		if got := fileName(owner, 123); got != want {
			t.Fatalf("fileName(%q, 123) = %q, want %q", owner, got, want)
		}
	}
	for _, tc := range []struct {
		name  string
		owner string
		step  int64
		ok    bool
	}{
		{"pserver-2-step-0000000123.ckpt", "pserver-2", 123, true},
		{"pserver-2-step-12345678901.ckpt", "pserver-2", 12345678901, true},
		{"master-step-0000000123.ckpt", "master", 123, true},
		{"pserver-12-step-0000000123.ckpt", "pserver-2", 0, false},
		{"pserver-2-step-0000000123.ckpt", "pserver-12", 0, false},
		{"pserver-0-step-0000000123.ckpt", "master", 0, false},
		{"master-step-0000000123.ckpt", "pserver-0", 0, false},
		{"pserver-2-step-123.ckpt", "pserver-2", 0, false},
		{"pserver-2-step-+000000123.ckpt", "pserver-2", 0, false},
		{"pserver-2-step-0000000123.ckpt.tmp-1", "pserver-2", 0, false},
		{".pserver-2-step-0000000123.ckpt.tmp-77", "pserver-2", 0, false},
	} {
		step, ok := parseFileName(tc.name, tc.owner)
		if step != tc.step || ok != tc.ok {
			t.Errorf("parseFileName(%q, %q) = %d, %v; want %d, %v", tc.name, tc.owner, step, ok, tc.step, tc.ok)
		}
	}
	stem := func(job string, rev int64, owner string) string { return fileStem(Identity{Job: job, Rev: rev}, owner) }
	if got, want := fileName(stem("fit-a-line", 42, "pserver-2"), 123), "fit-a-line_r42_pserver-2-step-0000000123.ckpt"; got != want {
		t.Fatalf("file name with identity = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		name string
		stem string
		ok   bool
	}{
		{"fit-a-line_r42_pserver-2-step-0000000123.ckpt", stem("fit-a-line", 42, "pserver-2"), true},
		{"fit-a-line_r4_pserver-2-step-0000000123.ckpt", stem("fit-a-line", 42, "pserver-2"), false},
		{"fit-a-line_r42_pserver-2-step-0000000123.ckpt", stem("fit-a-line", 4, "pserver-2"), false},
		{"fit-a-line_r42_pserver-2-step-0000000123.ckpt", stem("a-line", 42, "pserver-2"), false},
		{"x.fit-a-line_r42_pserver-2-step-0000000123.ckpt", stem("fit-a-line", 42, "pserver-2"), false},
		{"fit-a-line_r42_master-step-0000000123.ckpt", stem("fit-a-line", 42, "pserver-2"), false},
		{"pserver-2-step-0000000123.ckpt", stem("fit-a-line", 42, "pserver-2"), false}, // format 1, no identity
	} {
		if _, ok := parseFileName(tc.name, tc.stem); ok != tc.ok {
			t.Errorf("parseFileName(%q, %q) ok = %v, want %v", tc.name, tc.stem, ok, tc.ok)
		}
	}
	temp := ".pserver-2-step-0000000123.ckpt.tmp-77"
	if !isTempFor(temp, "pserver-2") || isTempFor(temp, "pserver-1") || isTempFor(temp, "master") {
		t.Fatal("isTempFor does not tell temp files of pserver-2 apart")
	}
}
