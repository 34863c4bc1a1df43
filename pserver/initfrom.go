package pserver

import (
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
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
	man, values, err := model.ReadModel(f.Resolved)
	if err != nil {
		return fmt.Errorf("pserver %d: init_from: %w", p.cfg.Index, err)
	}
	have := man.ParamSpecs()
	if err := jobspec.CheckInitModel(f, p.layout.Params, have, f.Resolved); err != nil {
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	p.warm = make([][]float32, len(p.layout.Params))
	for j, ps := range p.layout.Params {
		if f.Loads(ps.Name) {
			p.warm[j] = values[slices.IndexFunc(have, func(h model.ParamSpec) bool { return h.Name == ps.Name })]
		}
	}
	p.log.Info("warm start", "model", f.Resolved, "pass", man.Pass, "step", man.Step)
	return nil
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
