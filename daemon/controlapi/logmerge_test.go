package controlapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// stamp is a role's log line at second s (plus ms) of a fixed minute.
func stamp(s, ms int, msg string) string {
	at := time.Date(2026, 1, 2, 3, 4, s, ms*1_000_000, time.UTC)
	return fmt.Sprintf("time=%s level=INFO msg=%q\n", at.Format("2006-01-02T15:04:05.000Z07:00"), msg)
}

// fixedSource is a source that hands over its events and ends.
func fixedSource(events ...logEvent) <-chan logEvent {
	ch := make(chan logEvent, len(events))
	for _, e := range events {
		ch <- e
	}
	close(ch)
	return ch
}

type emitted struct {
	worker, data string
}

// runMerge merges sources to their end and returns what was sent.
func runMerge(t *testing.T, sources ...<-chan logEvent) []emitted {
	t.Helper()
	var out []emitted
	err := newLogMerge(sources, func(w string, d []byte) error {
		out = append(out, emitted{w, string(d)})
		return nil
	}, nil).run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMergeOrdersByTime(t *testing.T) {
	a := fixedSource(
		logEvent{worker: "master", data: []byte(stamp(1, 0, "m1") + stamp(3, 0, "m3"))},
		logEvent{worker: "master", data: []byte(stamp(5, 0, "m5") + "panic: boom\ngoroutine 1\n" + stamp(7, 0, "m7"))},
	)
	// A relayed source: two workers of another node, merged there already.
	b := fixedSource(
		logEvent{worker: "trainer-0", data: []byte(stamp(2, 0, "t2") + stamp(3, 0, "t3"))},
		logEvent{worker: "pserver-0", data: []byte(stamp(4, 0, "p4"))},
		logEvent{worker: "trainer-0", data: []byte(stamp(6, 0, "t6"))},
	)
	got := runMerge(t, a, b)
	want := []emitted{
		{"master", stamp(1, 0, "m1")},
		{"trainer-0", stamp(2, 0, "t2")},
		{"master", stamp(3, 0, "m3")}, // a tie goes to the source listed first
		{"trainer-0", stamp(3, 0, "t3")},
		{"pserver-0", stamp(4, 0, "p4")},
		{"master", stamp(5, 0, "m5") + "panic: boom\ngoroutine 1\n"}, // a line without time stays after its predecessor
		{"trainer-0", stamp(6, 0, "t6")},
		{"master", stamp(7, 0, "m7")},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged:\n%q\nwant\n%q", got, want)
	}
}

func TestMergeGroupsAWorkersLines(t *testing.T) {
	a := fixedSource(logEvent{worker: "master", data: []byte(stamp(1, 0, "a") + stamp(1, 1, "b") + stamp(1, 2, "c"))})
	b := fixedSource(logEvent{worker: "trainer-0", data: []byte(stamp(9, 0, "z"))})
	got := runMerge(t, a, b)
	if len(got) != 2 || strings.Count(got[0].data, "\n") != 3 {
		t.Errorf("merged %q, want master's three lines in one chunk", got)
	}
}

// A source that has neither a line nor word that it is caught up holds
// the others back: that is what merges the backlog of several nodes.
func TestMergeWaitsForEverySource(t *testing.T) {
	fast := make(chan logEvent, 1)
	slow := make(chan logEvent)
	out := make(chan emitted, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idles := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- newLogMerge([]<-chan logEvent{fast, slow}, func(w string, d []byte) error {
			out <- emitted{w, string(d)}
			return nil
		}, func() error { idles <- struct{}{}; return nil }).run(ctx)
	}()
	fast <- logEvent{worker: "a", data: []byte(stamp(5, 0, "late"))}
	fast <- logEvent{caughtUp: true}
	select {
	case e := <-out:
		t.Fatalf("sent %q before the slow source answered", e)
	case <-time.After(100 * time.Millisecond):
	}
	slow <- logEvent{worker: "b", data: []byte(stamp(1, 0, "early"))}
	slow <- logEvent{caughtUp: true}
	for _, want := range []string{"early", "late"} {
		if e := <-out; !strings.Contains(e.data, want) {
			t.Fatalf("sent %q, want the %s line", e, want)
		}
	}
	<-idles // both caught up and everything sent
	// Following: a new line of a caught-up source goes out at once.
	fast <- logEvent{worker: "a", data: []byte(stamp(6, 0, "new"))}
	if e := <-out; !strings.Contains(e.data, "new") {
		t.Fatalf("sent %q, want the new line", e)
	}
	fast <- logEvent{caughtUp: true}
	<-idles
	close(fast)
	close(slow)
	if err := <-done; err != nil {
		t.Fatalf("merge of ended sources: %v", err)
	}
}

func TestMergeStopsOnSourceErrorAndContext(t *testing.T) {
	boom := errors.New("read failed")
	err := newLogMerge([]<-chan logEvent{fixedSource(logEvent{err: boom})}, func(string, []byte) error { return nil }, nil).run(context.Background())
	if !errors.Is(err, boom) {
		t.Errorf("merge with a failing source: %v, want its error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = newLogMerge([]<-chan logEvent{make(chan logEvent)}, func(string, []byte) error { return nil }, nil).run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("merge after cancel: %v, want context.Canceled", err)
	}
}
