package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNoNodeRecovery means the job applied no step within the bench's wait
// after a host crashed: the dead node's roles were not placed elsewhere.
var ErrNoNodeRecovery = errors.New("no step applied after the host crash")

// nodeRecoveryWait bounds the wait for the first step after a host crash.
const nodeRecoveryWait = 90 * time.Second

// MeasureNodeRecovery is recovery_node: on a 3-host cluster in network
// namespaces (internal/testing/netcluster; root, iproute2, etcd-server), the seconds
// from a host crash (its agent and every role on it SIGKILLed, never
// restarted) to the next step the sync job applies. The crashed host runs a
// pserver, so recovery is a re-placement plus a rollback to the newest
// global checkpoint. netcluster.ErrUnavailable: cannot run here.
func MeasureNodeRecovery(binDir, housingData string) (float64, error) {
	if err := netcluster.Available(); err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "gtrain-bench-node")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	c, err := netcluster.New(netcluster.Options{Hosts: 3, Dir: work, Bin: binDir})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	for _, h := range c.Hosts {
		if _, err := c.StartAgent(h, "--api-addr", h.IP+":"+netcluster.APIPort, "--gossip-addr", h.IP+":7946", "--insecure"); err != nil {
			return 0, err
		}
	}
	shared := filepath.Join(work, "shared")
	if _, err := dataset.Convert(dataset.ConvertOptions{Format: "whitespace", Input: housingData,
		OutPrefix: filepath.Join(shared, "data", "housing"), Shards: 4, TestFraction: 0.2, Seed: 1, Normalize: true}); err != nil {
		return 0, err
	}
	return crashPserverHost(c, shared)
}

// crashPserverHost runs the job, crashes a host (not the one gctl talks
// to) that runs a pserver, and times the recovery.
func crashPserverHost(c *netcluster.Cluster, shared string) (float64, error) {
	cli, err := c.EtcdClient(context.Background())
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	spec := filepath.Join(shared, "recovery.yaml")
	if err := os.WriteFile(spec, []byte(recoverySpec(shared, filepath.Join(shared, "checkpoints"))), 0o644); err != nil {
		return 0, err
	}
	if _, errs, code, err := c.Gctl(c.Hosts[0].Agent.API, "job", "start", "-f", spec, "--detach"); err != nil || code != 0 {
		return 0, fmt.Errorf("recovery_node: job start: exit %d: %v %s", code, err, errs)
	}
	defer func() { _, _, _, _ = c.Gctl(c.Hosts[0].Agent.API, "job", "stop", "recovery") }()
	m := &measurer{cli: cli, job: "recovery"}
	if _, err := m.waitProgress(60*time.Second, func(p schema.ProgressRecord) bool { return p.Step > 200 }); err != nil {
		return 0, err
	}
	victim, err := pserverHost(cli, c)
	if err != nil {
		return 0, err
	}
	at, err := m.progress()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	victim.Agent.Crash()
	rolled := steppedAfterRollback(polled{step: at.Step, epoch: at.Epoch})
	if _, err := m.waitProgress(nodeRecoveryWait, func(p schema.ProgressRecord) bool { return rolled(polled{step: p.Step, epoch: p.Epoch}) }); err != nil {
		return 0, fmt.Errorf("%w within %s (crashed %s at step %d): %v", ErrNoNodeRecovery, nodeRecoveryWait, victim.Name, at.Step, err)
	}
	return time.Since(start).Seconds(), nil
}

// pserverHost is a host besides the first (which gctl talks to) that runs
// a pserver of the job.
func pserverHost(cli clientv3.KV, c *netcluster.Cluster) (*netcluster.Host, error) {
	for i := range 2 {
		var w schema.WorkerRecord
		if _, err := coord.GetJSON(context.Background(), cli, coord.WorkerKey("recovery", fmt.Sprintf("pserver-%d", i)), &w); err != nil {
			return nil, err
		}
		for _, h := range c.Hosts[1:] {
			if h.Name == w.Node {
				return h, nil
			}
		}
	}
	return nil, fmt.Errorf("recovery_node: no pserver runs on a host besides %s", c.Hosts[0].Name)
}
