package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestMeasurerSeesTheJobEnd: a job that failed is reported with its reason
// at once, by the waits for its pserver, its steps, and the master's meta
// and progress records, instead of after their timeouts; a running job is
// not.
func TestMeasurerSeesTheJobEnd(t *testing.T) {
	srv := etcdtest.Start(t)
	cli, err := coord.Dial(context.Background(), []string{srv.Endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	m := &measurer{cli: cli, job: "j"}
	if err := m.ended(); err != nil {
		t.Fatalf("a job without a state ended: %v", err)
	}
	if _, err := cli.Put(context.Background(), coord.StateKey("j"), coord.MustJSON(schema.StateRecord{State: api.StateRunning})); err != nil {
		t.Fatal(err)
	}
	if err := m.ended(); err != nil {
		t.Fatalf("a running job ended: %v", err)
	}
	reason := "trainer-0: model program: declare: KeyError"
	if _, err := coord.SetJobState(context.Background(), cli, "j", api.StateFailed, reason); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := m.newStepPoller(0, time.Minute); err == nil || !strings.Contains(err.Error(), reason) {
		t.Errorf("waiting for the pserver of a failed job: %v; want its reason %q", err, reason)
	}
	// No pserver answers there: only the job's end stops the wait.
	conn, err := grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	p := &stepPoller{conn: conn, ps: api.NewPServerClient(conn), ended: m.ended}
	defer p.close()
	if _, err := p.waitStep(time.Minute, 10*time.Millisecond, 5); err == nil || !strings.Contains(err.Error(), reason) {
		t.Errorf("waiting for steps of a failed job: %v; want its reason %q", err, reason)
	}
	if _, _, err := m.waitMeta(time.Minute, 10*time.Millisecond, func(meta) bool { return false }); err == nil || !strings.Contains(err.Error(), reason) {
		t.Errorf("waiting for the master's meta record of a failed job: %v; want its reason %q", err, reason)
	}
	if _, err := m.waitProgress(time.Minute, func(schema.ProgressRecord) bool { return false }); err == nil || !strings.Contains(err.Error(), reason) {
		t.Errorf("waiting for the progress of a failed job: %v; want its reason %q", err, reason)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the waits took %s to see the failure", d)
	}
}
