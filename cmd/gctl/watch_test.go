package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// `job watch` prints only the newest events of a job's past; a job with
// fewer has all of them printed.
func TestPastEvents(t *testing.T) {
	for _, n := range []int{0, 3, 12} {
		var st api.JobStatus
		for i := range n {
			st.Events = append(st.Events, api.Event{Time: testNow.Add(time.Duration(i) * time.Second), What: "e" + strconv.Itoa(i)})
		}
		seen := pastEvents(st, watchEventsShown)
		shown := 0
		for i, e := range st.Events {
			if !seen[eventKey{unixNano: e.Time.UnixNano(), what: e.What}] {
				shown++
				if i < n-watchEventsShown {
					t.Errorf("%d events: old event %d shown", n, i)
				}
			}
		}
		if want := min(n, watchEventsShown); shown != want {
			t.Errorf("%d events: %d shown, want %d", n, shown, want)
		}
	}
}
