package program

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gtrain/gtrain/internal/confine"
)

// ResolveEntry checks model.entry against the workspace and returns the
// command to run there. The workspace is resolved (symlinks and all) and
// must be a directory. The program word is either an absolute executable
// (an interpreter such as /usr/bin/python3), a bare command name found on
// PATH, or a path inside the workspace. Every other word that names a path
// must be relative and stay inside the workspace: no "..", no absolute
// path, no symlink leading out. Errors wrap ErrEntry.
func ResolveEntry(workspace string, argv []string) (dir string, out []string, err error) {
	if len(argv) == 0 {
		return "", nil, fmt.Errorf("%w: empty", ErrEntry)
	}
	if !filepath.IsAbs(workspace) {
		return "", nil, fmt.Errorf("%w: workspace %q is not absolute", ErrEntry, workspace)
	}
	dir, err = filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", nil, fmt.Errorf("%w: workspace: %v", ErrEntry, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("%w: workspace %s is not a directory", ErrEntry, workspace)
	}
	prog, err := resolveProgram(dir, argv[0])
	if err != nil {
		return "", nil, err
	}
	out = []string{prog}
	for _, a := range argv[1:] {
		if err := checkArg(dir, a); err != nil {
			return "", nil, err
		}
		out = append(out, a)
	}
	return dir, out, nil
}

func resolveProgram(dir, word string) (string, error) {
	switch {
	case filepath.IsAbs(word):
		return checkExecutable(word)
	case !strings.Contains(word, "/") && !exists(filepath.Join(dir, word)):
		p, err := exec.LookPath(word)
		if err != nil {
			return "", fmt.Errorf("%w: %q is neither in the workspace nor on PATH", ErrEntry, word)
		}
		return p, nil
	}
	real, err := inside(dir, word)
	if err != nil {
		return "", err
	}
	return checkExecutable(real)
}

func checkExecutable(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrEntry, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not an executable file", ErrEntry, p)
	}
	return p, nil
}

// checkArg refuses an argument that names a path outside the workspace.
func checkArg(dir, a string) error {
	v := a
	if i := strings.IndexByte(a, '='); i >= 0 && strings.HasPrefix(a, "-") {
		v = a[i+1:] // --flag=value: check the value
	}
	if filepath.IsAbs(v) {
		return fmt.Errorf("%w: argument %q is an absolute path; name files relative to the workspace", ErrEntry, a)
	}
	for _, part := range strings.Split(filepath.ToSlash(v), "/") {
		if part == ".." {
			return fmt.Errorf("%w: argument %q leaves the workspace (..)", ErrEntry, a)
		}
	}
	if v == "" || strings.HasPrefix(v, "-") || !exists(filepath.Join(dir, v)) {
		return nil
	}
	_, err := inside(dir, v)
	return err
}

// inside resolves the workspace-relative path rel and refuses it when it
// (through symlinks) leaves dir.
func inside(dir, rel string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		return "", fmt.Errorf("%w: %q in the workspace: %v", ErrEntry, rel, err)
	}
	if !confine.Within(dir, real) {
		return "", fmt.Errorf("%w: %q resolves to %s, outside the workspace %s", ErrEntry, rel, real, dir)
	}
	return real, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}
