package console

import (
	"fmt"
	"time"

	"github.com/gtrain/gtrain/api"
)

// cursor is what a job page already has: the passes before Passes of the
// history and the events up to the time Events (Unix nanoseconds; events
// are kept in time order, and the oldest are trimmed, so a count would
// skip new ones once trimming starts). It travels as the SSE event id, so
// a page that reconnects (its EventSource sends Last-Event-ID) gets only
// what it lacks.
type cursor struct {
	Passes int
	Events int64
}

func (c cursor) id() string { return fmt.Sprintf("%d.%d", c.Passes, c.Events) }

// parseCursor reads an event id; anything else is the empty cursor (send
// everything).
func parseCursor(id string) cursor {
	var c cursor
	if _, err := fmt.Sscanf(id, "%d.%d", &c.Passes, &c.Events); err != nil || c.Passes < 0 || c.Events < 0 {
		return cursor{}
	}
	return c
}

// newEvents are the events of evs (in time order) after the cursor's.
func (c cursor) newEvents(evs []api.Event) []api.Event {
	i := 0
	for i < len(evs) && evs[i].Time.UnixNano() <= c.Events {
		i++
	}
	return evs[i:]
}

// historyFeed decides which of a job's finished passes a page needs: those
// after the last one it has and, among those sent on this connection, a
// pass redone after a rollback (its entry ends at another time). A
// 10,000-pass job thus costs its page the whole history once, then a pass
// at a time.
type historyFeed struct {
	next  int               // the first pass the page does not have
	ended map[int]time.Time // the passes sent on this connection, by when they ended
}

func newHistoryFeed(c cursor) *historyFeed {
	return &historyFeed{next: c.Passes, ended: map[int]time.Time{}}
}

// update is the entries of hist (oldest first) the page lacks.
func (f *historyFeed) update(hist []api.PassHistory) []api.PassHistory {
	var out []api.PassHistory
	for _, h := range hist {
		sent, seen := f.ended[h.Pass]
		switch {
		case h.Pass >= f.next:
			f.next = h.Pass + 1
		case seen && !sent.Equal(h.Ended):
		default:
			continue
		}
		f.ended[h.Pass] = h.Ended
		out = append(out, h)
	}
	return out
}
