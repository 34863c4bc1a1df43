package program

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// StartForJob starts the program of a job whose model is kind program, in
// the sandbox the node's policy pol asks for (sandboxFor; rev is the create
// revision of the job's record, which with the name claims the job's uid;
// 0, before there is a record: a uid of the program's own), asks
// it to declare its parameters, and, when the job record holds the
// declaration made at submit, checks that this one is identical. The caller
// closes the client.
//
// A job whose workspace was uploaded (model.package) needs fetch, which
// returns the package's bytes; they are checked against the SHA-256 and
// unpacked into a private directory that Close removes.
//
// The program's stderr lines go to log, which a role writes to its worker's
// log (`gctl job logs`).
func StartForJob(ctx context.Context, spec *jobspec.Spec, rev int64, fetch PackageFetcher, pol sandbox.Policy, log *slog.Logger) (*Client, *Declaration, error) {
	return startForJob(ctx, spec, rev, fetch, pol, log, nil, true)
}

// startForJob is StartForJob with env added to the program's environment
// after the job's, and its stderr logged or not.
func startForJob(ctx context.Context, spec *jobspec.Spec, rev int64, fetch PackageFetcher, pol sandbox.Policy, log *slog.Logger, env []string, stderrToLog bool) (*Client, *Declaration, error) {
	m := spec.Model
	ws, cleanup, err := workspaceOf(ctx, spec, fetch)
	if err != nil {
		return nil, nil, &Error{Op: "start", Err: err}
	}
	dir, argv, err := ResolveEntry(ws, m.EntryArgv())
	if err != nil {
		cleanup()
		return nil, nil, &Error{Op: "start", Err: err}
	}
	timeout, err := m.ProgramTimeout()
	if err != nil {
		cleanup()
		return nil, nil, &Error{Op: "start", Err: fmt.Errorf("%w: model.timeout: %v", ErrEntry, err)}
	}
	threads := ThreadsFor(spec.Resources.Trainer.CPU)
	sb, err := sandboxFor(spec, rev, pol)
	if err != nil {
		cleanup()
		return nil, nil, &Error{Op: "start", Err: err}
	}
	if sb != nil && spec.Model.Package != "" {
		if err := sb.GiveTree(dir); err != nil {
			sb.Close()
			cleanup()
			return nil, nil, &Error{Op: "start", Err: fmt.Errorf("%w: the unpacked workspace: %v", ErrPackage, err)}
		}
	}
	c, err := Start(Config{Argv: argv, Dir: dir, Timeout: timeout, Log: log, StderrToLog: stderrToLog, Threads: threads,
		Env: append(spec.EnvList(), env...), Sandbox: sb})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	c.cleanup = cleanup
	d, err := c.Declare(ctx, DeclareArgs{Seed: spec.Seed, Inputs: m.Inputs, Outputs: m.Outputs, Hidden: m.Hidden,
		Threads: threads, IDFields: m.Fields})
	if err == nil && m.Declared != nil {
		err = c.checkRecord(d, m.Declared)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, d, nil
}

// sandboxFor is the program's sandbox under pol (nil: none), limited by
// the trainers' resources (every role's program is the same program, and
// the trainers' request is the one a program's work is sized by), showing
// the directories of the env's path lists.
func sandboxFor(spec *jobspec.Spec, rev int64, pol sandbox.Policy) (*sandbox.Sandbox, error) {
	r := spec.Resources.Trainer
	mem, err := r.MemoryBytes()
	if err != nil {
		return nil, err
	}
	var ro []string
	for _, p := range spec.EnvPaths() { // confined to the allowed paths at submit
		ro = append(ro, p.Path)
	}
	return pol.Prepare(sandbox.Job{Name: spec.Name, Owner: sandbox.JobOwner(spec.Name, rev), Limits: sandbox.LimitsFor(r.CPU, mem), ReadOnly: ro})
}

// ThreadsFor is the thread count of a program whose trainer asks for cpu:
// the whole cores of it, at least one. Every role passes the trainers'
// figure, so that a trainer's program and its restart compute alike.
func ThreadsFor(cpu float64) int {
	return max(1, int(cpu))
}

// checkRecord compares a declaration with the one recorded at submit.
func (c *Client) checkRecord(d *Declaration, rec *jobspec.Declared) error {
	got := d.Record()
	if !slices.EqualFunc(got.Params, rec.Params, func(a, b jobspec.DeclaredParam) bool {
		return a.Name == b.Name && slices.Equal(a.Shape, b.Shape)
	}) {
		return c.fail("declare", fmt.Errorf("%w: parameters %v, recorded %v", ErrMismatch, got.Params, rec.Params))
	}
	if !slices.Equal(got.Tables, rec.Tables) {
		return c.fail("declare", fmt.Errorf("%w: tables %v, recorded %v", ErrMismatch, got.Tables, rec.Tables))
	}
	if got.InitSHA256 != rec.InitSHA256 {
		return c.fail("declare", fmt.Errorf("%w: initial values have sha256 %s, recorded %s (the program must be deterministic for a seed)",
			ErrMismatch, got.InitSHA256, rec.InitSHA256))
	}
	return nil
}

// CheckWorkspace says whether model.workspace still leads under the job's
// roots where the program is started (check: the role's
// confine.Roots.Check): a workspace swapped for a symlink out of them since
// submit is refused. An uploaded package is unpacked into a private
// directory and needs no check.
func CheckWorkspace(spec *jobspec.Spec, check func(string) error) error {
	if spec.Model.Package != "" || spec.Model.Workspace == "" {
		return nil
	}
	if err := check(spec.Model.Workspace); err != nil {
		return fmt.Errorf("model.workspace: %w", err)
	}
	return nil
}

// PackageFetcher returns the bytes of a job's uploaded workspace.
type PackageFetcher func(ctx context.Context) ([]byte, error)

// workspaceOf is the directory the program runs in: model.workspace, or the
// uploaded package unpacked into a fresh private directory.
func workspaceOf(ctx context.Context, spec *jobspec.Spec, fetch PackageFetcher) (dir string, cleanup func(), err error) {
	if spec.Model.Package == "" {
		return spec.Model.Workspace, func() {}, nil
	}
	if fetch == nil {
		return "", nil, fmt.Errorf("%w: the job's workspace was uploaded, and this process cannot fetch it", ErrPackage)
	}
	data, err := fetch(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("%w: fetch: %v", ErrPackage, err)
	}
	// The workspace inside a 0700 directory: a sandbox that cannot chown
	// it to the job's uid makes it readable by all (Sandbox.GiveTree), and
	// only the program's bind of it may reach it.
	top, err := os.MkdirTemp("", "gtrain-workspace-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(top) }
	dir = filepath.Join(top, "workspace")
	if err := os.Mkdir(dir, 0o700); err != nil {
		cleanup()
		return "", nil, err
	}
	if err := Unpack(data, spec.Model.Package, dir); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// Record is the declaration as the job record keeps it.
func (d *Declaration) Record() *jobspec.Declared {
	rec := &jobspec.Declared{Tables: slices.Clone(d.Tables)}
	h := sha256.New()
	for j, p := range d.Params {
		rec.Params = append(rec.Params, jobspec.DeclaredParam{Name: p.Name, Shape: slices.Clone(p.Shape)})
		h.Write(model.Float32Bytes(d.Init[j]))
	}
	rec.InitSHA256 = hex.EncodeToString(h.Sum(nil))
	return rec
}

// DeclareForSubmit runs the program of spec once, records its declaration in
// spec.Model.Declared and stops it: what the agent does when it accepts a
// job. The job has no record yet: the program gets a uid of its own,
// released when it ends, never that of a running job of the same name.
func DeclareForSubmit(ctx context.Context, spec *jobspec.Spec, fetch PackageFetcher, pol sandbox.Policy, log *slog.Logger) error {
	spec.Model.Declared = nil // never trust a submitted one
	// The agent, whose child this declare is, keeps every GPU of its node
	// visible; the program sees none, as a role that asked for none
	// (daemon/supervisor): PyTorch's adapter moves its module to a GPU it
	// sees, which would start CUDA, at every submit, on a GPU a running job
	// holds, for values computed on the CPU.
	//
	// Its stderr is not logged: log is the agent's, not a job's, and a
	// refusal quotes the tail.
	c, d, err := startForJob(ctx, spec, 0, fetch, pol, log, []string{"CUDA_VISIBLE_DEVICES="}, false)
	if err != nil {
		return err
	}
	c.Close()
	spec.Model.Declared = d.Record()
	return nil
}
