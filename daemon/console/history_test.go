package console

import (
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

func passes(from, to int, ended time.Time) []api.PassHistory {
	var h []api.PassHistory
	for p := from; p < to; p++ {
		h = append(h, api.PassHistory{Pass: p, Ended: ended.Add(time.Duration(p) * time.Second)})
	}
	return h
}

// TestHistoryFeedSendsOnlyWhatThePageLacks: the whole history once, then
// the new passes only; a pass redone after a rollback again; after a
// reconnect, nothing before the page's cursor.
func TestHistoryFeedSendsOnlyWhatThePageLacks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	f := newHistoryFeed(cursor{})
	if got := f.update(passes(0, 10000, t0)); len(got) != 10000 {
		t.Fatalf("first update sent %d passes, want 10000", len(got))
	}
	if got := f.update(passes(0, 10000, t0)); len(got) != 0 {
		t.Fatalf("an unchanged history sent %d passes, want 0", len(got))
	}
	h := passes(0, 10002, t0)
	if got := f.update(h); len(got) != 2 || got[0].Pass != 10000 {
		t.Fatalf("two new passes: sent %+v", got)
	}
	h[9999].Ended = h[9999].Ended.Add(time.Minute) // redone after a rollback
	if got := f.update(h); len(got) != 1 || got[0].Pass != 9999 {
		t.Fatalf("a redone pass: sent %+v", got)
	}
	if c := parseCursor(cursor{Passes: f.next, Events: 7}.id()); c != (cursor{10002, 7}) {
		t.Fatalf("cursor round trip: %+v", c)
	}
	r := newHistoryFeed(parseCursor("10001.3"))
	if got := r.update(h); len(got) != 1 || got[0].Pass != 10001 {
		t.Fatalf("after a reconnect at pass 10001: sent %d passes", len(got))
	}
	if c := parseCursor("junk"); c != (cursor{}) {
		t.Fatalf("a bad id gives %+v, want the empty cursor", c)
	}
}

// A reconnecting page gets the events after the last one it has, even when
// the oldest were trimmed meanwhile (a count of events would skip new ones).
func TestCursorNewEventsAfterTrimming(t *testing.T) {
	t0 := time.Unix(2000, 0)
	ev := func(i int) api.Event {
		return api.Event{Time: t0.Add(time.Duration(i) * time.Second), What: fmt.Sprint(i)}
	}
	page := cursor{Events: ev(5).Time.UnixNano()} // the page has events 0..5
	trimmed := []api.Event{ev(3), ev(4), ev(5), ev(6), ev(7)}
	got := parseCursor(page.id()).newEvents(trimmed)
	if len(got) != 2 || got[0].What != "6" || got[1].What != "7" {
		t.Errorf("new events %+v, want 6 and 7", got)
	}
	if got := (cursor{}).newEvents(trimmed); len(got) != 5 {
		t.Errorf("a page with nothing gets %d events, want all 5", len(got))
	}
}
