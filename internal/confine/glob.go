package confine

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Glob confines a glob pattern: its literal leading directories are
// resolved and checked like Path, and so is every file it matches now (a
// match may be a symlink out of the roots). It returns the pattern with its
// literal part resolved.
func (r Roots) Glob(pattern string) (string, error) {
	if !filepath.IsAbs(pattern) {
		return "", fmt.Errorf("%w %q: not absolute", ErrUnresolvable, pattern)
	}
	prefix, rest := splitGlob(filepath.Clean(pattern))
	real, err := r.Path(prefix)
	if err != nil {
		return "", fmt.Errorf("pattern %q: %w", pattern, err)
	}
	resolved := real
	if rest != "" {
		resolved = filepath.Join(real, rest)
	}
	matches, err := filepath.Glob(resolved)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrUnresolvable, pattern, err)
	}
	for _, m := range matches {
		if _, err := r.Path(m); err != nil {
			return "", fmt.Errorf("pattern %q matches %w", pattern, err)
		}
	}
	return resolved, nil
}

// GlobDir is the directory of a clean absolute pattern's leading
// components without glob metacharacters: where its matches are (a
// pattern without any names one file: its directory).
func GlobDir(pattern string) string {
	prefix, rest := splitGlob(filepath.Clean(pattern))
	if rest == "" {
		return filepath.Dir(prefix)
	}
	return prefix
}

// splitGlob cuts a clean absolute pattern into its leading directories
// without glob metacharacters and the rest.
func splitGlob(pattern string) (prefix, rest string) {
	parts := strings.Split(pattern, string(filepath.Separator))
	for i, part := range parts {
		if strings.ContainsAny(part, `*?[\`) {
			prefix = strings.Join(parts[:i], string(filepath.Separator))
			if prefix == "" {
				prefix = string(filepath.Separator)
			}
			return prefix, filepath.Join(parts[i:]...)
		}
	}
	return pattern, ""
}
