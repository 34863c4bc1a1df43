package client

import (
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// MaxBlockFloats caps a block (4 MiB) so a large parameter spreads over
// pservers and streams in bounded pieces.
const MaxBlockFloats = 1 << 20

// Layout is what every role derives identically from the job spec: the model
// and how its parameters are cut into blocks over the pservers.
type Layout struct {
	// Model is nil for a user's program (model.kind program): the program
	// computes, and Spec and Params come from what it declared at submit;
	// and for the recommender, which Rec computes (its dense parameters are
	// Params; its rows live in the pservers' tables).
	Model  model.Model
	Rec    *model.Recommender
	Spec   model.Spec
	Params []model.ParamSpec
	Sizes  []int
	Blocks []Block
	// Tables are the embedding tables whose rows the pservers hold
	// (jobspec.Spec.EmbeddingTables): the recommender's, or a program's;
	// TableFields the records' id field (index in model.fields) of each.
	Tables      []model.RecTable
	TableFields []int
}

// NewLayout derives the layout of spec.
func NewLayout(spec *jobspec.Spec) (*Layout, error) { return NewLayoutWith(spec, model.Options{}) }

// NewLayoutWith is NewLayout with the built-in model computing as o says.
func NewLayoutWith(spec *jobspec.Spec, o model.Options) (*Layout, error) {
	l := &Layout{Spec: spec.Model.ToModel(), Tables: spec.EmbeddingTables()}
	if spec.Model.IsProgram() {
		d := spec.Model.Declared
		if d == nil || len(d.Params) == 0 {
			return nil, fmt.Errorf("job %s: the program's parameters were not declared at submit", spec.Name)
		}
		l.Params = d.ParamSpecs()
	} else if spec.Model.IsRecommender() {
		r, err := model.NewRecommenderWith(spec.Model.RecSpec(), o)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", spec.Name, err)
		}
		l.Rec, l.Params = r, r.Params()
	} else {
		m, err := model.NewWith(l.Spec, o)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", spec.Name, err)
		}
		l.Model, l.Params = m, m.Params()
	}
	for _, t := range l.Tables {
		i := slices.Index(spec.Model.Fields, t.Field)
		if i < 0 {
			return nil, fmt.Errorf("job %s: table %q is no id field of the records (%v)", spec.Name, t.Field, spec.Model.Fields)
		}
		l.TableFields = append(l.TableFields, i)
	}
	var sizes []int
	for _, p := range l.Params {
		sizes = append(sizes, p.Size())
	}
	blocks, err := Partition(sizes, spec.Pservers, MaxBlockFloats)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", spec.Name, err)
	}
	l.Sizes, l.Blocks = sizes, blocks
	return l, nil
}

// NewParams allocates one zeroed slice per parameter.
func (l *Layout) NewParams() [][]float32 {
	out := make([][]float32, len(l.Sizes))
	for i, n := range l.Sizes {
		out[i] = make([]float32, n)
	}
	return out
}
