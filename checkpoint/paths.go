package checkpoint

import "os"

// Paths is how a Store reaches its directory and files: in the roles, the
// job's confine.Roots, which resolve every path beneath the job's roots
// where it is used (a directory or file swapped for a symlink out of them
// is refused); nil in Config is the plain file system.
type Paths interface {
	MkdirAll(dir string, perm os.FileMode) error
	Open(path string) (*os.File, error)
	// Check says whether path (the directory, before a write) still
	// leads under the roots.
	Check(path string) error
}

// osPaths is the plain file system.
type osPaths struct{}

func (osPaths) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osPaths) Open(path string) (*os.File, error)          { return os.Open(path) }
func (osPaths) Check(string) error                          { return nil }
