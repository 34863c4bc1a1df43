// Package logcheck checks, in tests, that every log line carries each
// attribute once: a role's logger already holds its job and index (the
// agent's child loggers their job and worker), and code logging through it
// must not add them again. Buffer collects a log for a test to read while
// goroutines write it.
//
// It is test support: it must not be imported by production code.
package logcheck

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Logger returns a logger that writes through next (nowhere if nil) and
// fails t, when t ends, for each line that carried an attribute key twice.
// Lines logged after t ended are not checked.
func Logger(t testing.TB, next slog.Handler) *slog.Logger {
	h := NewHandler(next)
	t.Cleanup(func() {
		for _, line := range h.Repeats() {
			t.Errorf("log line with a repeated attribute: %s", line)
		}
	})
	return slog.New(h)
}

// Handler passes every record on to its next handler and remembers the
// lines that carried an attribute key twice. A key inside a group counts
// with the group's name ("g.k"), as the text handler prints it.
type Handler struct {
	next    slog.Handler
	prefix  string   // the open groups, "g1.g2."
	keys    []string // of the attributes added by With, qualified
	repeats *repeats
}

type repeats struct {
	mu    sync.Mutex
	lines []string
}

// NewHandler returns a Handler writing through next (nowhere if nil).
func NewHandler(next slog.Handler) *Handler {
	if next == nil {
		next = slog.DiscardHandler
	}
	return &Handler{next: next, repeats: &repeats{}}
}

// Repeats describes the lines so far that carried a key twice.
func (h *Handler) Repeats() []string {
	h.repeats.mu.Lock()
	defer h.repeats.mu.Unlock()
	return slices.Clone(h.repeats.lines)
}

// Enabled is true at every level, so that debug lines are checked too.
func (h *Handler) Enabled(context.Context, slog.Level) bool { return true }

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	keys := slices.Clone(h.keys)
	r.Attrs(func(a slog.Attr) bool {
		keys = appendKeys(keys, h.prefix, a)
		return true
	})
	if twice := repeated(keys); len(twice) > 0 {
		h.repeats.mu.Lock()
		h.repeats.lines = append(h.repeats.lines, fmt.Sprintf("%q repeats %s (keys %s)",
			r.Message, strings.Join(twice, ", "), strings.Join(keys, " ")))
		h.repeats.mu.Unlock()
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.keys = slices.Clone(h.keys)
	for _, a := range attrs {
		c.keys = appendKeys(c.keys, h.prefix, a)
	}
	c.next = h.next.WithAttrs(attrs)
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	c.next = h.next.WithGroup(name)
	return &c
}

// appendKeys adds the qualified keys a contributes to a line: a group's
// members, nothing for an empty attribute (handlers drop it).
func appendKeys(keys []string, prefix string, a slog.Attr) []string {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return keys
	}
	if a.Value.Kind() != slog.KindGroup {
		return append(keys, prefix+a.Key)
	}
	if a.Key != "" {
		prefix += a.Key + "."
	}
	for _, member := range a.Value.Group() {
		keys = appendKeys(keys, prefix, member)
	}
	return keys
}

// repeated lists, in first-seen order, the keys that occur more than once.
func repeated(keys []string) []string {
	count := map[string]int{}
	var twice []string
	for _, k := range keys {
		count[k]++
		if count[k] == 2 {
			twice = append(twice, k)
		}
	}
	return twice
}
