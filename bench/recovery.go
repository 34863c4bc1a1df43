package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Recovery measures, with real processes under a real `gtraind agent --dev`,
// the seconds from SIGKILL of a trainer, a pserver and the master to the next
// step the job applies (default TTLs: 5 s sessions).
type Recovery struct {
	Trainer, Pserver, Master float64
}

// MeasureRecovery runs fit-a-line (sync, 2 pservers, 2 trainers) long enough
// to kill one role at a time.
func MeasureRecovery(binDir, housingData string) (*Recovery, error) {
	work, err := os.MkdirTemp("", "gtrain-bench-recovery")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	a, err := startBenchAgent(binDir, work)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	if _, err := dataset.Convert(dataset.ConvertOptions{Format: "whitespace", Input: housingData,
		OutPrefix: filepath.Join(work, "data", "housing"), Shards: 4, TestFraction: 0.2, Seed: 1, Normalize: true}); err != nil {
		return nil, err
	}
	if err := a.submit(recoverySpec(work, "")); err != nil {
		return nil, err
	}
	m := &measurer{cli: a.cli, job: "recovery"}
	if _, err := m.waitProgress(60*time.Second, func(p schema.ProgressRecord) bool { return p.Step > 200 }); err != nil {
		return nil, err
	}
	return m.killEachRole()
}

// recoverySpec is the job the recovery benchmarks crash things in; its
// checkpoints go to ckptDir ("" is the agent's default).
func recoverySpec(work, ckptDir string) string {
	ckpt := `{every: "50", keep: 3}`
	if ckptDir != "" {
		ckpt = fmt.Sprintf(`{every: "50", keep: 3, dir: %s}`, ckptDir)
	}
	return fmt.Sprintf(`name: recovery
mode: sync
trainers: 2
pservers: 2
passes: 100000
batch_size: 20
model: {kind: linear, inputs: 13, outputs: 1}
optimizer: {kind: sgd, learning_rate: 0.001}
data: {train: %s/data/housing-train-*, test: %s/data/housing-test-*}
checkpoint: %s
`, work, work, ckpt)
}

// bestEffort writes to w and reports every write done: a copy for the
// operator to read (AgentLog) whose write fails (a full disk) must not
// stop the copy of the agent's output, or the agent would block on its
// full pipe.
type bestEffort struct{ w io.Writer }

func (b bestEffort) Write(p []byte) (int, error) {
	_, _ = b.w.Write(p)
	return len(p), nil
}

// AgentLog, when set (bench -agent-log), is a file the bench's agents also
// append their output to as they run: what an agent and its roles did is
// then there to read while a job is still starting, or after the bench
// was killed.
var AgentLog string

// benchAgent is a real `gtraind agent --dev` with a client of its etcd and
// of its Control API.
type benchAgent struct {
	apiAddr string
	cmd     *exec.Cmd
	log     e2erig.LogBuffer // read while the agent still writes (a job's failure)
	logFile *os.File         // AgentLog's, closed at stop
	cli     *clientv3.Client
	conn    *grpc.ClientConn
	ctl     api.ControlClient
}

func startBenchAgent(binDir, work string, extra ...string) (*benchAgent, error) {
	etcdAddr, apiAddr := freeAddr(), freeAddr()
	a := &benchAgent{apiAddr: apiAddr}
	a.cmd = exec.Command(filepath.Join(binDir, "gtraind"), append([]string{"agent", "--dev", "--data-dir", filepath.Join(work, "agent"),
		"--allowed-path", work, // the data is beside the data dir, and submit sends no spec file
		"--node-name", "bench", "--api-addr", apiAddr, "--gossip-addr", freeAddr(),
		"--etcd-client-addr", etcdAddr, "--etcd-peer-addr", freeAddr(),
		// Placement books cores, it does not pin them: trainer_mlp_threads
		// asks for cpu: 2 beside its pservers and master on a 2-core machine,
		// scripts/scaling.sh for 16 trainers of cpu: 1 on a 16-core one.
		"--cpu", "64"}, extra...)...)
	var out io.Writer = &a.log
	if AgentLog != "" {
		f, err := os.OpenFile(AgentLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("agent log: %w", err)
		}
		a.logFile, out = f, io.MultiWriter(&a.log, bestEffort{f})
	}
	a.cmd.Stdout, a.cmd.Stderr = out, out
	if err := a.cmd.Start(); err != nil {
		if a.logFile != nil {
			a.logFile.Close()
		}
		return nil, fmt.Errorf("start agent: %w", err)
	}
	var err error
	for i := 0; i < 300; i++ {
		if a.cli, err = coord.Dial(context.Background(), []string{"http://" + etcdAddr}, nil); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil {
		a.conn, err = grpc.NewClient(apiAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if err != nil {
		a.stop()
		return nil, fmt.Errorf("agent: %w\n%s", err, a.log.String())
	}
	a.ctl = api.NewControlClient(a.conn)
	return a, nil
}

// submit parses the spec and submits it, retrying while the API starts.
func (a *benchAgent) submit(specYAML string) error {
	spec, err := jobspec.Parse([]byte(specYAML))
	if err != nil {
		return err
	}
	b, _ := json.Marshal(spec)
	for i := 0; ; i++ {
		_, err = a.ctl.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: b})
		// The agent may not serve yet; a job it refuses (a program whose
		// declare failed: InvalidArgument) it refuses again, 7 s a try
		// on a lent machine, where 100 tries hid the reason for 12 minutes.
		if err == nil || status.Code(err) == codes.InvalidArgument || i > 100 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	return nil
}

func (a *benchAgent) stop() {
	if a.ctl != nil {
		_, _ = a.ctl.StopJob(context.Background(), &api.StopJobRequest{Name: "recovery"})
	}
	if a.conn != nil {
		_ = a.conn.Close()
	}
	if a.cli != nil {
		_ = a.cli.Close()
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	_ = a.cmd.Wait() // the agent's output is copied to its end
	if a.logFile != nil {
		_ = a.logFile.Close()
	}
}

// killEachRole kills a trainer, a pserver and the master in turn, timing
// each to the next step applied after it, as pserver 1 (never the one
// killed) reports it: the master saves its step commits in the background,
// up to 250 ms late, and a new master saves at once the steps it caught up
// on, so its records made a master's recovery read 0.4 ms.
func (m *measurer) killEachRole() (*Recovery, error) {
	p, err := m.newStepPoller(1, 60*time.Second)
	if err != nil {
		return nil, err
	}
	defer p.close()
	out := &Recovery{}
	if out.Trainer, err = m.killAndTime(p, "trainer-1", steppedOn); err != nil {
		return nil, err
	}
	if out.Pserver, err = m.killAndTime(p, "pserver-0", steppedAfterRollback); err != nil {
		return nil, err
	}
	// The trainers hold the work of the step after the kill, handed out
	// before it: the step after that needs the new master.
	if out.Master, err = m.killAndTime(p, "master", steppedOn); err != nil {
		return nil, err
	}
	return out, nil
}

// steppedOn is the recovery of a trainer or the master: two steps on in
// the same epoch, or, when the death cut a push so that the pservers
// disagreed and the job rolled back, a step after the rollback.
func steppedOn(at polled) func(polled) bool {
	afterRollback := steppedAfterRollback(at)
	return func(r polled) bool {
		return r.epoch == at.epoch && r.step >= at.step+2 || afterRollback(r)
	}
}

// steppedAfterRollback is the recovery of a pserver: the job rolled back to
// a global checkpoint (a new epoch) and applied a step after it.
func steppedAfterRollback(at polled) func(polled) bool {
	rolledTo := int64(-1)
	return func(r polled) bool {
		if r.epoch > at.epoch && rolledTo < 0 {
			rolledTo = r.step
		}
		return rolledTo >= 0 && r.step > rolledTo
	}
}

type measurer struct {
	cli *clientv3.Client
	job string
}

// progress reads the master's meta record. Sync step commits are saved in
// the background every 250 ms (and at once after a catch-up or a rollback),
// so a figure timed by it may be up to 250 ms late; the public progress
// record is written with the same saves.
func (m *measurer) progress() (schema.ProgressRecord, error) {
	var meta struct {
		Step  int64 `json:"step"`
		Epoch int64 `json:"epoch"`
	}
	_, err := coord.GetJSON(context.Background(), m.cli, coord.MasterMetaKey(m.job), &meta)
	return schema.ProgressRecord{Step: meta.Step, Epoch: meta.Epoch}, err
}

// waitProgress polls the master's progress record every millisecond.
func (m *measurer) waitProgress(timeout time.Duration, cond func(schema.ProgressRecord) bool) (schema.ProgressRecord, error) {
	deadline := time.Now().Add(timeout)
	ended := everySecond(m.ended)
	for time.Now().Before(deadline) {
		if p, err := m.progress(); err == nil && cond(p) {
			return p, nil
		}
		if err := ended(); err != nil {
			return schema.ProgressRecord{}, err
		}
		time.Sleep(time.Millisecond)
	}
	p, _ := m.progress()
	return p, fmt.Errorf("recovery bench: condition not met after %s (progress %+v)", timeout, p)
}

// killAndTime SIGKILLs worker and times it to the step that recovered
// says is past it. The step it counts from is read after the kill: steps
// already under way then do not count as recovered.
func (m *measurer) killAndTime(p *stepPoller, worker string, recovered func(at polled) func(polled) bool) (float64, error) {
	time.Sleep(time.Second) // let the previous recovery settle
	var w schema.WorkerRecord
	if _, err := coord.GetJSON(context.Background(), m.cli, coord.WorkerKey(m.job, worker), &w); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := syscall.Kill(w.PID, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill %s (pid %d): %w", worker, w.PID, err)
	}
	at, err := p.read()
	if err != nil {
		return 0, err
	}
	if _, err := p.waitFor(60*time.Second, time.Millisecond, "recovered", recovered(at)); err != nil {
		return 0, fmt.Errorf("%s: %w", worker, err)
	}
	return time.Since(start).Seconds(), nil
}
