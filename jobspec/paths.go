package jobspec

import "path/filepath"

// ResolvePaths makes the relative data.train, data.test and checkpoint.dir
// absolute against dir (the directory of the spec file), because the spec is
// read by the server, whose working directory is not the user's. dir should
// itself be absolute; empty paths stay empty.
func (s *Spec) ResolvePaths(dir string) {
	for _, p := range []*string{&s.Data.Train, &s.Data.Test, &s.Checkpoint.Dir} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}
