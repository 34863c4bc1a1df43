package master

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

func TestHungWatchFind(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const after = 10 * time.Second
	all := map[string]int{"trainer-0": 100, "trainer-1": 101, "trainer-2": 102, "pserver-0": 200, "pserver-1": 201}
	type probe struct {
		at     time.Duration
		index  int
		health client.Health
	}
	for _, tc := range []struct {
		name   string
		pids   map[string]int // at t0; nil: all
		later  map[string]int // replaces pids at t0+later (a restart)
		probes []probe
		stall  stepStall
		at     time.Duration
		want   []string
		reason string
	}{
		{name: "all progress", stall: stepStall{trainers: 3}, at: time.Minute},
		{name: "one trainer missing", stall: stepStall{step: 812, missing: []int{1}, stalled: true, trainers: 3}, at: time.Minute,
			want: []string{"trainer-1"}, reason: "trainer-1 has not reported step 812 for 10s"},
		{name: "every trainer missing: not theirs", stall: stepStall{missing: []int{0, 1, 2}, stalled: true, trainers: 3}, at: time.Minute},
		{name: "the only trainer missing", pids: map[string]int{"trainer-0": 100, "pserver-0": 200},
			stall: stepStall{step: 3, missing: []int{0}, stalled: true, trainers: 1}, at: time.Minute, want: []string{"trainer-0"}},
		{name: "trainer replaced not long ago", later: map[string]int{"trainer-0": 100, "trainer-1": 111, "trainer-2": 102, "pserver-0": 200, "pserver-1": 201},
			stall: stepStall{missing: []int{1}, stalled: true, trainers: 3}, at: 15 * time.Second},
		{name: "pserver silent too briefly", probes: []probe{{0, 1, client.Answered}, {5 * time.Second, 1, client.Silent}},
			stall: stepStall{trainers: 3}, at: 14 * time.Second},
		{name: "pserver silent", probes: []probe{{0, 1, client.Answered}, {5 * time.Second, 1, client.Silent}, {12 * time.Second, 1, client.Silent}},
			stall: stepStall{missing: []int{0, 1, 2}, stalled: true, trainers: 3}, at: 15 * time.Second,
			want: []string{"pserver-1"}, reason: "pserver-1 has not answered a health probe for 10s"},
		{name: "silent pserver excuses missing trainers", probes: []probe{{0, 0, client.Answered}, {2 * time.Second, 0, client.Silent}},
			stall: stepStall{missing: []int{2}, stalled: true, trainers: 3}, at: 12 * time.Second, want: []string{"pserver-0"}},
		{name: "silent pserver excuses missing trainers before it is hung", probes: []probe{{0, 0, client.Answered}, {5 * time.Second, 0, client.Silent}},
			stall: stepStall{missing: []int{2}, stalled: true, trainers: 3}, at: 12 * time.Second},
		{name: "pserver unreachable is dead, not hung", probes: []probe{{0, 1, client.Answered}, {5 * time.Second, 1, client.Unreachable}, {12 * time.Second, 1, client.Silent}},
			stall: stepStall{trainers: 3}, at: 12 * time.Second},
		{name: "pserver answers again", probes: []probe{{0, 1, client.Answered}, {11 * time.Second, 1, client.Silent}, {12 * time.Second, 1, client.Answered}},
			stall: stepStall{trainers: 3}, at: 12 * time.Second},
		{name: "not running: not hung", pids: map[string]int{"trainer-0": 100, "trainer-2": 102, "pserver-0": 200, "pserver-1": 201},
			stall: stepStall{missing: []int{1}, stalled: true, trainers: 3}, at: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHungWatch(after)
			pids := tc.pids
			if pids == nil {
				pids = all
			}
			h.observe(pids, t0)
			if tc.later != nil {
				h.observe(tc.later, t0.Add(tc.at-5*time.Second))
			}
			for _, p := range tc.probes {
				h.probed(p.index, p.health, t0.Add(p.at))
			}
			got := h.find(t0.Add(tc.at), tc.stall, 2, jobspec.TrainerName)
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, tc.want) {
				t.Fatalf("hung = %v, want %v", names, tc.want)
			}
			for w, f := range got {
				if f.PID != pids[w] || (tc.reason != "" && f.Reason != tc.reason) || !strings.HasPrefix(f.Reason, w) {
					t.Errorf("%s: %+v, want pid %d reason %q", w, f, pids[w], tc.reason)
				}
			}
		})
	}
}
