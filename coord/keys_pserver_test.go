package coord

import (
	"strings"
	"testing"
)

func TestPserverCheckpointMarkKey(t *testing.T) {
	for _, tc := range []struct {
		job   string
		step  int64
		index int
		want  string
	}{
		{"mnist-1", 42, 3, "/gtrain/jobs/mnist-1/checkpoint/marks/000000000042/pserver-3"},
		{"a", 0, 0, "/gtrain/jobs/a/checkpoint/marks/000000000000/pserver-0"},
		{"a", 123456789012, 10, "/gtrain/jobs/a/checkpoint/marks/123456789012/pserver-10"},
	} {
		got := PserverCheckpointMarkKey(tc.job, tc.step, tc.index)
		if got != tc.want {
			t.Errorf("PserverCheckpointMarkKey(%q, %d, %d) = %q, want %q", tc.job, tc.step, tc.index, got, tc.want)
		}
		// The master counts a step's marks with one range read of this prefix.
		if !strings.HasPrefix(got, CheckpointMarkPrefix(tc.job)) {
			t.Errorf("%q is not under CheckpointMarkPrefix %q", got, CheckpointMarkPrefix(tc.job))
		}
	}
}
