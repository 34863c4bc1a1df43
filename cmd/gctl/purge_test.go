package main

import (
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
)

func TestJobStopPurgeSaysWhatItDeletesAndAsks(t *testing.T) {
	status := api.JobStatus{Name: "fit-a-line", State: api.StateSucceeded, ModelDir: "/var/lib/gtrain/jobs/fit-a-line/model"}
	deletes := []string{"deletes, for good", "the trained model /var/lib/gtrain/jobs/fit-a-line/model", "/var/lib/gtrain/jobs/fit-a-line"}
	tests := []struct {
		name    string
		tty     bool
		answer  string
		args    []string
		code    int
		stopped bool
		stdout  []string
		stderr  []string
	}{
		{"no terminal, no --yes", false, "", nil, exitRejected, false, nil, append([]string{"pass --yes", "without --purge"}, deletes...)},
		{"--yes", false, "", []string{"--yes"}, exitOK, true, []string{"deleted: the job's record", "the trained model"}, deletes},
		{"terminal, yes", true, "y\n", nil, exitOK, true, []string{"can be used again"}, append([]string{"Delete them? [y/N]"}, deletes...)},
		{"terminal, no", true, "\n", nil, exitFailure, false, nil, []string{"Delete them? [y/N]", "not confirmed", "nothing stopped or deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAgent{statuses: []api.JobStatus{status}}
			addr := startAgent(t, f)
			a, stdout, stderr := newTestApp(t)
			a.stdin, a.stdinTTY = strings.NewReader(tt.answer), tt.tty
			r := runGctl(t, a, stdout, stderr, append([]string{"--addr", addr, "job", "stop", "fit-a-line", "--purge"}, tt.args...)...)
			wantRun(t, r, tt.code, tt.stdout, tt.stderr)
			if got := f.stopReq != nil; got != tt.stopped {
				t.Errorf("stop request sent: %v, want %v", got, tt.stopped)
			}
		})
	}
}

func TestPurgeTargetsKeepAModelUnderCheckpointDir(t *testing.T) {
	deleted, kept := purgeTargets(api.JobStatus{Name: "j", ModelDir: "/shared/ckpt/model/j"})
	if strings.Contains(strings.Join(deleted, " "), "/shared/ckpt/model/j") {
		t.Errorf("deleted %q names the model under checkpoint.dir, which the purge keeps", deleted)
	}
	if len(kept) != 1 || !strings.Contains(kept[0], "/shared/ckpt/model/j") {
		t.Errorf("kept %q, want the model under checkpoint.dir", kept)
	}
}
