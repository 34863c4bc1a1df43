package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// TestWithLabels: the agent's labels are added, replace a child's own of
// the same name, and the pairs come out sorted.
func TestWithLabels(t *testing.T) {
	pair := func(n, v string) *dto.LabelPair { return &dto.LabelPair{Name: proto.String(n), Value: proto.String(v)} }
	got := withLabels([]*dto.LabelPair{pair("zone", "a"), pair("job", "wrong")}, []*dto.LabelPair{pair("job", "fit"), pair("worker", "trainer-0")})
	var s []string
	for _, l := range got {
		s = append(s, l.GetName()+"="+l.GetValue())
	}
	if strings.Join(s, ",") != "job=fit,worker=trainer-0,zone=a" {
		t.Errorf("labels %v", s)
	}
}

// TestAgentHandlerGathersChildren: the agent's /metrics serves a real
// role registry, served by ServeRole and found through its address file,
// with job, role and worker labels, beside the agent's own restarts; a
// worker whose file names nothing is left out and counted.
func TestAgentHandlerGathersChildren(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := prometheus.NewRegistry()
	tr := NewTrainer(reg)
	addrFile := filepath.Join(dir, "metrics", "trainer-0.addr")
	if err := ServeRole(ctx, reg, addrFile, nil); err != nil {
		t.Fatal(err)
	}
	tr.Pushed(3*time.Millisecond, 20, true)
	tr.Pushed(time.Millisecond, 20, false)
	tr.Pulled(2 * time.Millisecond)
	tr.Computed(30 * time.Millisecond)
	workers := []Worker{
		{Job: "fit", Role: "trainer", Worker: "trainer-0", AddrFile: addrFile, Restarts: 2, Running: true},
		{Job: "fit", Role: "trainer", Worker: "trainer-1", AddrFile: filepath.Join(dir, "none.addr"), Running: true},
	}
	srv := httptest.NewServer(NewAgentHandler(func() []Worker { return workers }))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	for _, want := range []string{
		`gtrain_trainer_steps_total{job="fit",role="trainer",worker="trainer-0"} 1`,
		`gtrain_trainer_records_total{job="fit",role="trainer",worker="trainer-0"} 20`,
		`gtrain_trainer_push_seconds_count{job="fit",role="trainer",worker="trainer-0"} 2`,
		`gtrain_trainer_pull_seconds_count{job="fit",role="trainer",worker="trainer-0"} 1`,
		`gtrain_trainer_compute_seconds_sum{job="fit",role="trainer",worker="trainer-0"} 0.03`,
		`gtrain_worker_restarts_total{job="fit",role="trainer",worker="trainer-0"} 2`,
		`gtrain_worker_up{job="fit",role="trainer",worker="trainer-1"} 1`,
		`gtrain_agent_scrape_errors_total{job="fit",role="trainer",worker="trainer-1"} 1`,
		`go_goroutines{job="fit",role="trainer",worker="trainer-0"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(addrFile); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the address file outlived the role's metrics")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNilRecorders: a role without metrics passes nil and records nothing.
func TestNilRecorders(t *testing.T) {
	var tr *Trainer = NewTrainer(nil)
	tr.Pushed(time.Second, 1, true)
	tr.Pulled(time.Second)
	tr.Computed(time.Second)
	var ps *Pserver = NewPserver(nil, nil)
	ps.Checkpointed(time.Second, time.Second, false)
	RegisterMaster(nil, nil)
}
