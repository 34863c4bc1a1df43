package controlapi

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/jobspec"
)

// maxSpecFile bounds what the agent reads of a submitted spec file.
const maxSpecFile = 1 << 20

// confineSpec checks that every path of spec lies under the roots this
// agent allows the job (README "Confined paths and limits") and rewrites
// each to its resolved form, which the roles then use. Nothing is created
// here: a rejected job leaves no trace.
func (c *Server) confineSpec(req *api.SubmitJobRequest, spec *jobspec.Spec) error {
	roots, err := confine.NewRoots(c.allowed...)
	if err != nil {
		return fmt.Errorf("the agent's allowed paths: %w", err)
	}
	var note string
	if req.GetSpecFile() != "" {
		dir, err := specDirRoot(req.GetSpecFile(), req.GetSpecSha256())
		if err != nil {
			note = fmt.Sprintf(" (the spec's directory is not one of them: %v)", err)
		} else {
			roots = roots.With(dir)
		}
	}
	for _, f := range spec.PathFields() {
		if *f.Path == "" {
			continue
		}
		resolve := roots.Path
		if f.Glob {
			resolve = roots.Glob
		}
		real, err := resolve(*f.Path)
		if err != nil {
			return &jobspec.FieldError{Field: f.Field, Msg: fmt.Sprintf(
				"%v%s; give a path under one of them, or start the agents with --allowed-path DIR", err, note)}
		}
		*f.Path = real
	}
	for _, p := range spec.EnvPaths() {
		if _, err := roots.Path(p.Path); err != nil {
			return &jobspec.FieldError{Field: p.Field, Msg: fmt.Sprintf(
				"%v%s; a path list of env takes directories under them only (start the agents with --allowed-path DIR)", err, note)}
		}
	}
	return nil
}

// errSpecFile says why a spec file's directory is not granted as a root.
var errSpecFile = errors.New("the agent cannot read that job spec file")

// specDirRoot grants the directory of the spec file gctl read when the agent
// reads, at the same absolute path, a regular file with the same SHA-256
// that parses as a job spec: a caller cannot make "/etc" a root by naming
// /etc/hostname, only by having written a job spec there. The file is opened
// non-blocking so that a FIFO cannot hang the call.
func specDirRoot(file string, sum []byte) (string, error) {
	if !filepath.IsAbs(file) || filepath.Clean(file) != file {
		return "", fmt.Errorf("%w: %q is not a clean absolute path", errSpecFile, file)
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errSpecFile, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", errSpecFile, file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSpecFile+1))
	if err != nil || len(data) > maxSpecFile {
		return "", fmt.Errorf("%w: %s: unreadable or over %d bytes", errSpecFile, file, maxSpecFile)
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], sum) {
		return "", fmt.Errorf("%w: %s here is not the file gctl read (another machine, or changed since)", errSpecFile, file)
	}
	if _, err := jobspec.Parse(data); err != nil {
		return "", fmt.Errorf("%w: %s is not a job spec", errSpecFile, file)
	}
	return confine.Resolve(filepath.Dir(file))
}
