package model

import "fmt"

// Names inside a model directory (docs/reference.md#model-files).
const (
	// LatestLink is the symlink in the model directory that points at the newest pass directory.
	LatestLink = "latest"
	// ManifestFile describes the model and lists the parameter files of one pass directory.
	ManifestFile = "manifest.json"
	// ParamFileExt ends the name of every raw little-endian float32 parameter file.
	ParamFileExt = ".f32"
)

// Manifest is manifest.json of one pass directory.
type Manifest struct {
	Kind    string          `json:"kind"`
	Inputs  int             `json:"inputs"`
	Outputs int             `json:"outputs"`
	Hidden  []int           `json:"hidden,omitempty"`
	Pass    int             `json:"pass"`
	Step    int64           `json:"step"`
	Params  []ParamManifest `json:"params"`
	// Optimizer is the optimizer's state at Step, which a warm start loads
	// when init_from.optimizer_state asks (absent in models written before
	// it was kept, and in exports).
	Optimizer *OptimizerManifest `json:"optimizer,omitempty"`
	// Tables are a recommender's embedding rows at Step, one entry per id
	// field: every row ever updated (the others are their initial values,
	// from the seed), sorted by id.
	Tables []TableManifest `json:"tables,omitempty"`
}

// TableManifest lists one embedding table's files: IDsFile holds Rows
// little-endian uint64 ids, File their Rows × Dim float32 values.
type TableManifest struct {
	Name      string `json:"name"`
	Dim       int    `json:"dim"`
	Rows      int    `json:"rows"`
	IDsFile   string `json:"ids_file"`
	IDsSHA256 string `json:"ids_sha256"`
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
}

// TableRows is one embedding table's stored rows, as a model keeps them.
type TableRows struct {
	Name string
	Dim  int
	IDs  []uint64
	Vals []float32 // Dim per id
}

// OptimizerManifest lists the optimizer's slot files: Slots[k][j] is slot k
// (momentum's velocity; adagrad's sum of squares; adam's first, then second
// moment) of parameter j, in NAME.slotK.f32. sgd keeps none.
type OptimizerManifest struct {
	Kind  string            `json:"kind"`
	Slots [][]ParamManifest `json:"slots,omitempty"`
}

// OptimizerState is an optimizer's state as a model keeps it: Slots[k][j]
// is slot k of parameter j, shaped as the parameter.
type OptimizerState struct {
	Kind  string
	Slots [][][]float32
}

// ParamManifest describes one parameter file; SHA256 is the lowercase hex
// digest of exactly the file's bytes (little-endian float32).
type ParamManifest struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// Spec is the model spec the manifest was written for.
func (m Manifest) Spec() Spec {
	return Spec{Kind: m.Kind, Inputs: m.Inputs, Outputs: m.Outputs, Hidden: m.Hidden}
}

// ParamSpecs are the parameters the manifest lists, as the model's.
func (m Manifest) ParamSpecs() []ParamSpec {
	ps := make([]ParamSpec, 0, len(m.Params))
	for _, p := range m.Params {
		ps = append(ps, ParamSpec{Name: p.Name, Shape: p.Shape})
	}
	return ps
}

// PassDirName is the directory name of pass p inside a model directory.
func PassDirName(pass int) string {
	return fmt.Sprintf("pass-%05d", pass)
}
