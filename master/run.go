package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/pserver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// Config configures the `gtraind master` process.
type Config struct {
	Job        string
	Node       string
	DataDir    string // the agent's data dir; the model goes to DataDir/jobs/JOB/model
	ListenAddr string
	SessionTTL int // seconds
	LongPoll   time.Duration
	Log        *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ListenAddr: "127.0.0.1:0", SessionTTL: 5, LongPoll: 2 * time.Second}
}

// Validate names the bad field.
func (c Config) Validate() error {
	switch {
	case c.Job == "":
		return errors.New("master: Job must be set")
	case c.DataDir == "":
		return errors.New("master: DataDir must be set")
	case c.SessionTTL < 1:
		return fmt.Errorf("master: SessionTTL must be >= 1, got %d", c.SessionTTL)
	}
	return nil
}

// Run campaigns for the job's mastership, then serves until training is done
// (nil) or leadership is lost (error: the agent restarts the process, which
// campaigns again as a standby).
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var rec coord.JobRecord
	if _, err := coord.GetJSON(ctx, cli, coord.JobKey(cfg.Job), &rec); err != nil {
		return fmt.Errorf("master: read job: %w", err)
	}
	spec := &rec.Spec
	layout, err := pserver.NewLayout(spec)
	if err != nil {
		return err
	}
	files, err := dataset.Glob(spec.Data.Train)
	if err != nil {
		return fmt.Errorf("master: data.train: %w", err)
	}
	tasks, err := CutTasks(files, spec.Data.ChunksPerTask)
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	var test []dataset.Example
	if spec.Data.Test != "" {
		tf, err := dataset.Glob(spec.Data.Test)
		if err != nil {
			return fmt.Errorf("master: data.test: %w", err)
		}
		if test, err = dataset.ReadAll(tf); err != nil {
			return fmt.Errorf("master: read test set: %w", err)
		}
	}

	lis, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("master: listen on %s: %w", cfg.ListenAddr, err)
	}
	defer lis.Close()

	session, err := coord.NewSession(ctx, cli, cfg.SessionTTL)
	if err != nil {
		return fmt.Errorf("master: etcd session: %w", err)
	}
	// Closed here only if the campaign fails; once leading, Release resigns
	// and revokes, even after ctx was cancelled by a SIGTERM.
	releaseSession := true
	defer func() {
		if releaseSession {
			_ = session.Close()
		}
	}()
	if coord.RevokeIfDead(ctx, cli, coord.MasterHolderKey(cfg.Job), cfg.Node, coord.ProcessAlive) {
		log.Warn("the previous master on this node is dead; revoked its lease to take over at once")
	}
	log.Info("campaigning for mastership", "addr", lis.Addr().String())
	lead, err := coord.Campaign(ctx, cli, session, coord.ElectionPrefix(cfg.Job), lis.Addr().String())
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	log.Info("leading", "term", lead.Rev())
	releaseSession = false
	defer lead.Release()
	holder := coord.Holder{Node: cfg.Node, PID: os.Getpid()}
	if err := lead.Commit(ctx, clientv3.OpPut(coord.MasterHolderKey(cfg.Job), coord.MustJSON(holder), clientv3.WithLease(session.Lease()))); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	// Authority ends with the session: everything below runs under leadCtx.
	leadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-lead.Done():
			log.Error("etcd session lost: no longer master; stopping at once")
			cancel()
		case <-leadCtx.Done():
		}
	}()

	ps, err := pserver.NewDynamic(leadCtx, cli, cfg.Job, spec.Pservers, layout.Blocks, log)
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	defer ps.Close()

	modelDir := filepath.Join(cfg.DataDir, "jobs", cfg.Job, "model")
	eval := &PassEvaluator{Layout: layout, PS: ps, Test: test, ModelDir: modelDir, Log: log}
	qcfg := DefaultQueueConfig()
	qcfg.Seed = spec.Seed
	sync := spec.Mode == "sync"
	if sync {
		qcfg.Timeout = 24 * time.Hour * 365 // sync tasks belong to the step group, not to one trainer
	}
	every, everySteps, err := spec.Checkpoint.Interval()
	if err != nil {
		return fmt.Errorf("master: checkpoint.every: %w", err)
	}
	ccfg := CoreConfig{Sync: sync, Trainers: spec.Trainers, Batch: spec.BatchSize, Passes: spec.Passes,
		Queue: qcfg, ModelDir: modelDir, LongPoll: cfg.LongPoll, CheckpointEvery: every, CheckpointSteps: everySteps}
	store := NewEtcdStore(cli, lead, cfg.Job)
	core, err := NewCore(leadCtx, ccfg, tasks, store, eval, SystemClock{}, log)
	if err != nil {
		return err
	}
	if _, err := coord.SetJobState(leadCtx, cli, cfg.Job, api.StateRunning, "", lead.Guard()); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	pass, step := core.Position()
	_ = coord.AppendEvent(leadCtx, cli, cfg.Job, fmt.Sprintf("master on %s (pid %d) leads, term %d, at pass %d step %d",
		cfg.Node, os.Getpid(), lead.Rev(), pass, step))

	var recov *recovery
	if sync {
		recov = &recovery{}
		ckRec := checkpoint.NewEtcdRecorder(cli, coord.JobPrefix(cfg.Job)+"master/checkpoint")
		ckRec.Guard = []clientv3.Cmp{lead.Guard()}
		mstore, err := checkpoint.NewStore(checkpoint.Config{Dir: filepath.Join(pserver.CheckpointDir(spec, cfg.DataDir), "master"),
			Keep: spec.Checkpoint.Keep, Index: 0}, ckRec, log)
		if err != nil {
			return fmt.Errorf("master: %w", err)
		}
		if _, _, err := mstore.Load(leadCtx); err != nil && !errors.Is(err, checkpoint.ErrNoCheckpoint) {
			log.Warn("master checkpoints", "err", err)
		}
		*recov = recovery{cli: cli, lead: lead, job: cfg.Job, pservers: spec.Pservers, core: core, ps: ps, store: mstore, log: log,
			node: cfg.Node, keep: spec.Checkpoint.Keep}
		r := recov
		watchFrom, err := r.readyLeases(leadCtx)
		if err != nil {
			return fmt.Errorf("master: %w", err)
		}
		go r.writeCheckpoints(leadCtx)
		go func() {
			if err := r.trackGlobal(leadCtx); err != nil {
				log.Error("checkpoint tracking stopped; master exits so a successor resumes it", "err", err)
				cancel()
			}
		}()
		if err := r.checkConsistent(leadCtx); err != nil {
			return fmt.Errorf("master: %w", err)
		}
		go func() {
			if err := r.watchPservers(leadCtx, watchFrom); err != nil && leadCtx.Err() == nil {
				log.Error("rollback failed; master exits so a successor retries", "err", err)
				cancel()
			}
		}()
	}

	srv := grpc.NewServer()
	mserver := NewServer(core, NewTrainerRegistry(cli, lead, cfg.Job, spec.Trainers), spec.Trainers)
	if recov != nil {
		mserver.rollback = func(ctx context.Context, epoch int64, why string) error {
			// The rollback outlives the trainer's request.
			return recov.requestRollback(leadCtx, epoch, why)
		}
	}
	api.RegisterMasterServer(srv, mserver)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()
	defer srv.Stop()
	go watchTrainers(leadCtx, cli, cfg.Job, core, log)

	ended := coord.WatchJobEnd(leadCtx, cli, cfg.Job)
	stallReported := int64(-1)
	lastEpochCheck := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ended:
			if !core.Done() {
				log.Info("job ended elsewhere (stopped or failed); master exits")
				return nil
			}
		case <-leadCtx.Done():
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("master: leadership lost")
		case err := <-serveErr:
			return fmt.Errorf("master: serve: %w", err)
		case <-tick.C:
			if err := core.Tick(leadCtx); err != nil {
				return err
			}
			if err := core.FlushProgress(leadCtx); err != nil {
				return err
			}
			if recov != nil && time.Since(lastEpochCheck) >= 5*time.Second {
				lastEpochCheck = time.Now()
				if err := recov.checkEpochs(leadCtx); err != nil {
					return err
				}
			}
			if step, missing, stalled := core.Stalled(stallAfter); stalled && step != stallReported {
				stallReported = step
				what := fmt.Sprintf("step %d has waited more than %s: no report yet from trainer IDs %v (see gctl job workers %s and their logs)",
					step, stallAfter, missing, cfg.Job)
				log.Warn(what)
				_ = coord.AppendEvent(leadCtx, cli, cfg.Job, what)
			}
		case <-core.Changed():
		}
		if err := core.Fatal(); err != nil {
			return err
		}
		if core.Done() {
			if _, err := coord.SetJobState(leadCtx, cli, cfg.Job, api.StateSucceeded, "", lead.Guard()); err != nil {
				return fmt.Errorf("master: %w", err)
			}
			_ = coord.AppendEvent(leadCtx, cli, cfg.Job, "training finished")
			log.Info("training finished")
			// Let trainers long-polling for work hear DONE before the server goes.
			time.Sleep(cfg.LongPoll + 500*time.Millisecond)
			srv.GracefulStop()
			return nil
		}
	}
}

// stallAfter is how long a sync step may wait for its trainers before the
// operator is told which ones it waits for.
const stallAfter = 30 * time.Second

// watchTrainers tells the core when a trainer's ID key vanishes with its lease.
func watchTrainers(ctx context.Context, cli *clientv3.Client, job string, core *Core, log *slog.Logger) {
	prefix := coord.TrainerPrefix(job)
	for ev := range cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithPrevKV()) {
		for _, e := range ev.Events {
			if e.Type != clientv3.EventTypeDelete {
				continue
			}
			id, err := strconv.Atoi(strings.TrimPrefix(string(e.Kv.Key), prefix))
			if err != nil {
				continue
			}
			var rec coord.TrainerRecord
			if e.PrevKv != nil {
				_ = json.Unmarshal(e.PrevKv.Value, &rec)
			}
			if core.Done() {
				continue // trainers leave at the end
			}
			log.Warn("trainer gone", "id", id, "worker", rec.Worker)
			if err := core.TrainerLost(ctx, id); err != nil {
				log.Error("release trainer", "id", id, "err", err)
			}
		}
	}
}
