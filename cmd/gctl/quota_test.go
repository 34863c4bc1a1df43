package main

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
)

// quotaAgent answers the quota calls: the last quota set, for user bob.
type quotaAgent struct {
	fakeAgent
	set *api.SetQuotaRequest
}

func (f *quotaAgent) SetQuota(_ context.Context, req *api.SetQuotaRequest) (*api.Document, error) {
	f.mu.Lock()
	f.set = req
	f.mu.Unlock()
	return f.GetQuota(context.Background(), &api.QuotaRequest{User: req.GetUser()})
}

func (f *quotaAgent) GetQuota(_ context.Context, req *api.QuotaRequest) (*api.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	row := api.QuotaRow{User: cmp.Or(req.GetUser(), "bob"), CPUUsed: 0.5, MemoryUsed: 256 << 20, JobsUsed: 1}
	if s := f.set; s != nil {
		row.CPU, row.Memory = s.Cpu, s.Memory
		if s.Jobs != nil {
			n := int(s.GetJobs())
			row.Jobs = &n
		}
	}
	b, _ := json.Marshal(row)
	return &api.Document{Json: b}, nil
}

// quota set sends the limits given (a limit left out: none) and prints
// the quota; quota get prints it as a table or JSON; bad values are exit 2.
func TestQuotaSetAndGet(t *testing.T) {
	f := &quotaAgent{}
	addr := startAgent(t, f)
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "quota", "set", "bob", "--cpu", "2", "--memory", "1Gi", "--jobs", "1")
	wantRun(t, r, exitOK, []string{"USER", "bob", "cpu", "0.5", "memory", "256Mi", "1Gi", "gpus", "-"}, nil)
	if s := f.set; s == nil || s.GetUser() != "bob" || s.GetCpu() != 2 || s.GetMemory() != 1<<30 || s.GetJobs() != 1 || s.Gpus != nil {
		t.Errorf("set request %+v, want bob cpu 2 memory 1Gi jobs 1 and no gpu limit", s)
	}
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "quota", "get", "-o", "json")
	wantRun(t, r, exitOK, []string{`"user": "bob"`, `"cpu": 2`, `"gpus": null`, `"jobs_used": 1`}, nil)
	for _, bad := range [][]string{
		{"quota", "set", "bob", "--memory", "lots"},
		{"quota", "set", "bob", "--jobs", "-1"},
		{"quota", "set", "bob", "--cpu", "-0.5"},
		{"quota", "set"},
		{"quota", "get", "a", "b"},
	} {
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, append([]string{"--addr", addr}, bad...)...)
		if r.code != exitRejected || !strings.Contains(r.stderr, "gctl: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2", bad, r.code, r.stderr)
		}
	}
}
