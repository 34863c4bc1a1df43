package pserver

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Re-sharding (sync jobs, `gctl job scale --pservers`): the master commits a
// new layout generation {pservers M, from global checkpoint S}. Each pserver
// process then ends its generation in place (its registration goes with its
// etcd session) and starts the next one in the same process: it re-reads
// the job, builds its shard of the new cut and restores step S by re-cutting
// the old generation's files of S (Recut). A pserver whose index the new
// layout lacks waits, unregistered, for the scheduler to stop it.

// Sentinel ends of a generation.
var (
	errNewLayout       = errors.New("the job's pserver layout moved to a new generation")
	errIndexOutOfRange = errors.New("index beyond the job's pserver count")
)

// Run serves pserver cfg.Index of cfg.Job until the job ends (nil) or the
// process loses its registration (error: the agent restarts it), one layout
// generation after another.
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	reg := &genRegistry{Registerer: cfg.Metrics}
	if cfg.Metrics != nil {
		cfg.Metrics = reg
	}
	for {
		gen, err := coord.GetLayout(ctx, cli, cfg.Job)
		if err != nil {
			return fmt.Errorf("pserver %d: %w", cfg.Index, err)
		}
		if gen.Generation > 0 && cfg.Index >= gen.Pservers {
			if cfg.Log != nil {
				cfg.Log.Info("this index is not in the job's layout; waiting to be stopped", "generation", gen.Generation, "pservers", gen.Pservers)
			}
			if !waitLayout(ctx, cli, cfg.Job, gen.Generation) {
				return nil
			}
			continue
		}
		err = runGeneration(ctx, cli, cfg, gen)
		reg.release()
		switch {
		case errors.Is(err, errIndexOutOfRange):
			// The job record has fewer pservers than this index (a layout
			// committed after the read above, or none yet): wait for the next.
			if !waitLayout(ctx, cli, cfg.Job, gen.Generation) {
				return nil
			}
		case !errors.Is(err, errNewLayout):
			return err
		}
	}
}

// waitLayout waits for the layout to leave generation gen (true) or for
// the job or ctx to end (false).
func waitLayout(ctx context.Context, cli *clientv3.Client, job string, gen int64) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	select {
	case <-coord.WatchLayout(ctx, cli, job, gen):
		return ctx.Err() == nil
	case <-coord.WatchJobEnd(ctx, cli, job):
		return false
	}
}

// adoptLayout makes gen the generation served; the job record read by
// newProcess must be of the same commit (CommitLayout writes both at once).
func (p *process) adoptLayout(gen schema.LayoutRecord) error {
	if gen.Generation > 0 && p.spec.Pservers != gen.Pservers {
		return fmt.Errorf("job record has %d pservers, layout generation %d has %d: %w", p.spec.Pservers, gen.Generation, gen.Pservers, errNewLayout)
	}
	p.gen = gen
	return nil
}

// watchLayout is closed when the job's layout leaves this generation.
func (p *process) watchLayout(ctx context.Context) <-chan struct{} {
	return coord.WatchLayout(ctx, p.cli, p.cfg.Job, p.gen.Generation)
}

// recutAt reports whether restoring step means re-cutting the checkpoint
// another layout wrote: the generation's first step.
func (p *process) recutAt(step int64) bool {
	return p.gen.Generation > 0 && step == p.gen.FromStep
}

// restoreRecut loads step from the files of the pservers of the generation
// that wrote it and keeps this pserver's blocks of the new cut (Recut) and
// the embedding rows client.RowOwner gives it under the new count
// (RecutRows).
func (p *process) restoreRecut(ctx context.Context, step, rollbackEpoch int64) error {
	old, err := client.Partition(p.layout.Sizes, p.gen.SourcePservers, client.MaxBlockFloats)
	if err != nil {
		return err
	}
	mine := client.BlocksOf(p.layout.Blocks, p.cfg.Index)
	sources := sourcesOf(old, mine)
	tables := p.shard.tables.names // fixed when the shard was built
	if len(tables) > 0 {
		// Any old pserver may hold rows RowOwner now gives this one.
		sources = nil
		for j := range p.gen.SourcePservers {
			sources = append(sources, j)
		}
	}
	sections := map[string][]float32{}
	bySource := make([]map[string][]float32, p.gen.SourcePservers)
	for _, j := range sources {
		if bySource[j], err = p.loadSource(ctx, j, step); err != nil {
			return err
		}
		maps.Copy(sections, bySource[j])
	}
	out, err := Recut(old, sections, mine, p.shard.opt.Slots())
	if err != nil {
		return fmt.Errorf("re-shard at step %d: %w", step, err)
	}
	rows, err := RecutRows(tables, bySource, p.cfg.Index, p.gen.Pservers)
	if err != nil {
		return fmt.Errorf("re-shard at step %d: %w", step, err)
	}
	out = append(out, rows...)
	p.driver.preserve()
	if err := p.shard.Restore(step, rollbackEpoch, out); err != nil {
		return err
	}
	p.log.Info("restored a re-cut checkpoint", "step", step, "from_pservers", p.gen.SourcePservers)
	p.event(ctx, fmt.Sprintf("%s restored step %d re-cut from the checkpoints of %d pservers (layout generation %d)", p.name, step, p.gen.SourcePservers, p.gen.Generation))
	return nil
}

// loadSource loads the sections of old pserver j's checkpoint of step.
func (p *process) loadSource(ctx context.Context, j int, step int64) (map[string][]float32, error) {
	store, err := p.sourceStore(j)
	if err != nil {
		return nil, err
	}
	snap, err := store.LoadStep(ctx, step)
	if err != nil {
		return nil, fmt.Errorf("re-shard: checkpoint of pserver-%d at step %d: %w", j, step, err)
	}
	if err := loadRowChain(store, snap, p.shard.tables.names); err != nil {
		return nil, fmt.Errorf("re-shard: checkpoint of pserver-%d at step %d: %w", j, step, err)
	}
	return sectionsByName(snap.Sections), nil
}

// sourceStore reads the checkpoints of pserver index j (read only: it never
// saves, so it needs no fence).
func (p *process) sourceStore(j int) (*checkpoint.Store, error) {
	if j == p.cfg.Index {
		return p.store, nil
	}
	rec := checkpoint.NewEtcdRecorder(p.cli, func(i int) string { return coord.CheckpointRecordKey(p.cfg.Job, i) })
	return checkpoint.NewStore(checkpoint.Config{Identity: checkpoint.Identity{Job: p.cfg.Job, Rev: p.jobRev},
		Dir: jobdir.Checkpoints(p.cfg.DataDir, p.spec), Paths: p.roots, Keep: p.spec.Checkpoint.Keep, Index: j,
		StepRecord: coord.CheckpointMarkRecords(p.cli, p.cfg.Job, jobspec.PserverName(j))}, rec, p.log)
}

// genRegistry registers one generation's metrics and unregisters them when
// it ends, so the next generation registers its own under the same names.
type genRegistry struct {
	prometheus.Registerer
	mine []prometheus.Collector
}

func (g *genRegistry) Register(c prometheus.Collector) error {
	if err := g.Registerer.Register(c); err != nil {
		return err
	}
	g.mine = append(g.mine, c)
	return nil
}

func (g *genRegistry) MustRegister(cs ...prometheus.Collector) {
	g.Registerer.MustRegister(cs...)
	g.mine = append(g.mine, cs...)
}

func (g *genRegistry) release() {
	if g.Registerer == nil {
		return
	}
	for _, c := range g.mine {
		g.Registerer.Unregister(c)
	}
	g.mine = nil
}
