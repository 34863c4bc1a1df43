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
