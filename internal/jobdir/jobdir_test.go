package jobdir

import (
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

func TestPaths(t *testing.T) {
	spec := &jobspec.Spec{Name: "fit"}
	moved := &jobspec.Spec{Name: "fit"}
	moved.Checkpoint.Dir = "/shared/ckpt"
	for _, tc := range []struct {
		what, got, want string
	}{
		{"Root", Root("/var/lib/gtrain", "fit"), "/var/lib/gtrain/jobs/fit"},
		{"Log", Log("/var/lib/gtrain", "fit"), "/var/lib/gtrain/jobs/fit/log"},
		{"WorkerLog", WorkerLog("/var/lib/gtrain", "fit", "trainer-0"), "/var/lib/gtrain/jobs/fit/log/trainer-0.log"},
		{"Model", Model("/var/lib/gtrain", spec), "/var/lib/gtrain/jobs/fit/model"},
		{"Model with checkpoint.dir", Model("/var/lib/gtrain", moved), "/shared/ckpt/model/fit"},
		{"Checkpoints", Checkpoints("/d", spec), "/d/jobs/fit/checkpoints"},
		{"Checkpoints with checkpoint.dir", Checkpoints("/d", moved), "/shared/ckpt"},
		{"MasterCheckpoints", MasterCheckpoints("/d", spec), "/d/jobs/fit/checkpoints/master"},
		{"MasterCheckpoints with checkpoint.dir", MasterCheckpoints("/d", moved), "/shared/ckpt/master"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}
