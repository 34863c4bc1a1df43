package logcheck

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestHandlerFindsRepeatedKeys(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want string // "" when the line is fine, else the repeated key
	}{
		{"distinct", func(l *slog.Logger) { l.With("job", "j").Info("m", "index", 0) }, ""},
		{"in the line", func(l *slog.Logger) { l.Info("m", "step", 1, "step", 2) }, "step"},
		{"With, then the line", func(l *slog.Logger) { l.With("job", "j").Info("m", "job", "j") }, "job"},
		{"With twice", func(l *slog.Logger) { l.With("index", 0).With("index", 0).Info("m") }, "index"},
		{"same key, other group", func(l *slog.Logger) { l.With("job", "j").WithGroup("g").Info("m", "job", "k") }, ""},
		{"same key in a group", func(l *slog.Logger) { l.WithGroup("g").With("a", 1).Info("m", "a", 2) }, "g.a"},
		{"group attribute", func(l *slog.Logger) { l.With("g.a", 1).Info("m", slog.Group("g", "a", 2)) }, "g.a"},
		{"inline group", func(l *slog.Logger) { l.With("a", 1).Info("m", slog.Group("", "a", 2)) }, "a"},
		{"empty attributes are dropped", func(l *slog.Logger) { l.Info("m", slog.Attr{}, slog.Attr{}) }, ""},
		{"debug lines too", func(l *slog.Logger) { l.Debug("m", "x", 1, "x", 1) }, "x"},
	}
	for _, tt := range tests {
		h := NewHandler(nil)
		tt.log(slog.New(h))
		got := h.Repeats()
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: repeats %q, want none", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], "repeats "+tt.want+" ")):
			t.Errorf("%s: repeats %q, want one line repeating %s", tt.name, got, tt.want)
		}
	}
}

func TestHandlerWritesThrough(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil))).With("job", "j")
	log.Info("hello", "step", 3)
	log.Debug("hidden")
	if got := buf.String(); !strings.Contains(got, "msg=hello job=j step=3") || strings.Contains(got, "hidden") {
		t.Errorf("written %q, want the info line only, with its attributes", got)
	}
}

// recordingT is a test whose failures and cleanups are recorded, not run.
type recordingT struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recordingT) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestLoggerFailsTheTestAtItsEnd(t *testing.T) {
	rt := &recordingT{TB: t}
	log := Logger(rt, nil).With("job", "j", "index", 0)
	log.Info("fine", "step", 1)
	log.Warn("twice", "index", 0)
	if len(rt.errors) != 0 || len(rt.cleanups) != 1 {
		t.Fatalf("before the end: errors %q, %d cleanups; want none and 1", rt.errors, len(rt.cleanups))
	}
	rt.cleanups[0]()
	if len(rt.errors) != 1 || !strings.Contains(rt.errors[0], `"twice" repeats index`) {
		t.Errorf("at the end: errors %q, want one naming the line and the key", rt.errors)
	}
}
