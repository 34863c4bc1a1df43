package jobspec

import (
	"path/filepath"
	"strings"
)

// PathField is one path of a spec: its YAML field, the value (to read or
// rewrite), and whether it is a glob.
type PathField struct {
	Field string
	Path  *string
	Glob  bool
}

// PathFields lists every path the spec names, in YAML order. Everything a
// job reads or writes is under one of them (the model and the master's
// checkpoints go under checkpoint.dir when it is set), so confining these
// confines the job.
func (s *Spec) PathFields() []PathField {
	return []PathField{
		{Field: "data.train", Path: &s.Data.Train, Glob: true},
		{Field: "data.test", Path: &s.Data.Test, Glob: true},
		{Field: "checkpoint.dir", Path: &s.Checkpoint.Dir},
		{Field: "model.workspace", Path: &s.Model.Workspace},
		{Field: "init_from.dir", Path: &s.InitFrom.Dir},
	}
}

// ResolvePaths makes the relative data.train, data.test, checkpoint.dir, model.workspace and init_from.dir
// absolute against dir (the directory of the spec file), because the spec is
// read by the server, whose working directory is not the user's. dir should
// itself be absolute; empty paths stay empty. A ".." is kept for the agent
// to resolve.
func (s *Spec) ResolvePaths(dir string) {
	for _, f := range s.PathFields() {
		if p := f.Path; *p != "" && !filepath.IsAbs(*p) {
			// Not filepath.Join: cleaning "link/.." away would change
			// where the path leads when link is a symlink; the agent
			// resolves it as the kernel would (confine.Resolve).
			*p = strings.TrimSuffix(dir, "/") + "/" + *p
		}
	}
}
