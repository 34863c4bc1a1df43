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

// PassDirName is the directory name of pass p inside a model directory.
func PassDirName(pass int) string {
	return fmt.Sprintf("pass-%05d", pass)
}
