package pserver

import (
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// loadInitModel reads the model a warm start begins from (init_from,
// pinned at submit in init_from.resolved) into p.warm: per parameter, its
// values, or nil where the seed's initialisation stays (not in
// init_from.only). The shapes were checked at submit; they are checked
// again, since the directory may have changed since.
func (p *process) loadInitModel() error {
	f := p.spec.InitFrom
	if f.Resolved == "" {
		return nil
	}
	man, values, err := model.ReadModelIn(p.roots.ReadFile, f.Resolved) // beneath the job's roots, as read now
	if err != nil {
		return fmt.Errorf("pserver %d: init_from: %w", p.cfg.Index, err)
	}
	have := man.ParamSpecs()
	if err := jobspec.CheckInitModel(f, p.layout.Params, have, f.Resolved); err != nil {
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	if err := jobspec.CheckInitOptimizer(f, p.spec.Optimizer, man.Optimizer, f.Resolved); err != nil {
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	var state model.OptimizerState
	if f.OptimizerState {
		if state, err = model.ReadOptimizerStateIn(p.roots.ReadFile, f.Resolved, man); err != nil {
			return fmt.Errorf("pserver %d: init_from: %w", p.cfg.Index, err)
		}
		p.stepBase = man.Step
	}
	p.warm = make([][]float32, len(p.layout.Params))
	p.warmSlots = make([][][]float32, len(state.Slots))
	for k := range p.warmSlots {
		p.warmSlots[k] = make([][]float32, len(p.layout.Params))
	}
	for j, ps := range p.layout.Params {
		if !f.Loads(ps.Name) {
			continue
		}
		i := slices.IndexFunc(have, func(h model.ParamSpec) bool { return h.Name == ps.Name })
		p.warm[j] = values[i]
		for k, slot := range state.Slots {
			p.warmSlots[k][j] = slot[i]
		}
	}
	if err := p.loadInitRows(man); err != nil {
		return err
	}
	p.log.Info("warm start", "model", f.Resolved, "pass", man.Pass, "step", man.Step, "optimizer_state", f.OptimizerState,
		"table_rows", len(p.warmRows))
	return nil
}

// loadInitRows keeps, of each embedding table the model holds and the job
// loads, the rows this pserver owns (client.RowOwner over the job's
// pservers): the table starts with them (TableConfig.Start), values only.
// The model keeps no optimizer state of rows: with optimizer_state, a
// table's rows start with a zero state all the same.
func (p *process) loadInitRows(man model.Manifest) error {
	f := p.spec.InitFrom
	tables := p.spec.EmbeddingTables()
	if len(tables) == 0 {
		return nil
	}
	if err := jobspec.CheckInitTables(f, tables, man.Tables, f.Resolved); err != nil {
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	read, err := model.ReadTablesIn(p.roots.ReadFile, f.Resolved, man, f.Loads)
	if err != nil {
		return fmt.Errorf("pserver %d: init_from: %w", p.cfg.Index, err)
	}
	p.warmRows = map[string]*model.TableRows{}
	for _, t := range read {
		if !slices.ContainsFunc(tables, func(w model.RecTable) bool { return w.Field == t.Name }) {
			continue // the model's, not this job's
		}
		own := &model.TableRows{Name: t.Name, Dim: t.Dim}
		for i, id := range t.IDs {
			if client.RowOwner(t.Name, id, p.spec.Pservers) == p.cfg.Index {
				own.IDs = append(own.IDs, id)
				own.Vals = append(own.Vals, t.Vals[i*t.Dim:(i+1)*t.Dim]...)
			}
		}
		p.warmRows[t.Name] = own
	}
	return nil
}

// initSlots fills slot k of block b from the warm start's optimizer state
// (zeros where none was loaded).
func (p *process) initSlots(b client.Block, k int, dst []float32) {
	if k < len(p.warmSlots) && p.warmSlots[k][b.Param] != nil {
		copy(dst, p.warmSlots[k][b.Param][b.Offset:b.Offset+len(dst)])
	}
}

// frozenParams is the indexes of the parameters init_from.freeze names.
func frozenParams(spec *jobspec.Spec, params []model.ParamSpec) map[int]bool {
	frozen := map[int]bool{}
	for j, ps := range params {
		if spec.InitFrom.Frozen(ps.Name) {
			frozen[j] = true
		}
	}
	return frozen
}
