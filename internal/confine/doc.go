// Package confine keeps the paths of a job under the directories an agent
// allows (issue 10, "Confined paths"; issue 19, item 7), twice.
//
// At submit (Roots.Path, Roots.Glob, Resolve) a path is made absolute and
// resolved as the kernel would: the symlinks of its longest existing prefix
// are evaluated, a ".." after a symlink included, and the result must lie
// under one of the roots, whose own symlinks are evaluated too. A ".." after
// a part that does not exist yet is refused: where it would lead depends on
// what is created first. The resolved path is what the job uses from then on.
//
// Where a path is opened (Roots.Open, OpenFile, ReadFile, MkdirAll, Matches,
// Check), it is resolved by the kernel beneath the deepest existing root
// that holds it: openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS, or,
// where openat2 is missing, a walk that opens one component at a time with
// O_NOFOLLOW and follows relative symlinks by hand (beneath.go). The root
// itself is opened from "/" with no symlink on the way. So a symlink placed,
// or a directory swapped for one, after submit cannot lead a job out; an
// absolute symlink is followed by hand and the path it leads to is opened
// beneath its own root.
//
// It reads the file system; it writes only what MkdirAll and OpenFile's
// flags ask for. It knows nothing of jobs: the roles pass their roots
// (internal/rolecfg.JobRoots).
package confine
