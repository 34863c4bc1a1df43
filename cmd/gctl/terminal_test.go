package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gtrain/gtrain/api"
)

func TestMonitorTTYLineFitsTheTerminal(t *testing.T) {
	st := running(1, nil)
	st.State, st.Reason = api.StatePending, strings.Repeat("needs 3 cpu for 3 trainers; ", 6)
	var out bytes.Buffer
	done := running(2, ptr(1))
	done.State = api.StateSucceeded
	m := &monitor{out: &out, tty: true, loc: time.UTC, wait: noWait, width: func() int { return 80 },
		poll: scripted(t, st, done)}
	if _, err := m.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(out.String(), clearLine) {
		if n := utf8.RuneCountInString(strings.TrimSuffix(row, "\n")); n >= 80 {
			t.Errorf("a progress line of %d columns on an 80-column terminal: %q", n, row)
		}
	}
}
