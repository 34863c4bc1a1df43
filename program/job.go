package program

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// StartForJob starts the program of a job whose model is kind program, asks
// it to declare its parameters, and, when the job record holds the
// declaration made at submit, checks that this one is identical. The caller
// closes the client.
func StartForJob(ctx context.Context, spec *jobspec.Spec, log *slog.Logger) (*Client, *Declaration, error) {
	m := spec.Model
	dir, argv, err := ResolveEntry(m.Workspace, m.EntryArgv())
	if err != nil {
		return nil, nil, &Error{Op: "start", Err: err}
	}
	timeout, err := m.ProgramTimeout()
	if err != nil {
		return nil, nil, &Error{Op: "start", Err: fmt.Errorf("%w: model.timeout: %v", ErrEntry, err)}
	}
	c, err := Start(Config{Argv: argv, Dir: dir, Timeout: timeout, Log: log})
	if err != nil {
		return nil, nil, err
	}
	d, err := c.Declare(ctx, DeclareArgs{Seed: spec.Seed, Inputs: m.Inputs, Outputs: m.Outputs, Hidden: m.Hidden})
	if err == nil && m.Declared != nil {
		err = c.checkRecord(d, m.Declared)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, d, nil
}

// checkRecord compares a declaration with the one recorded at submit.
func (c *Client) checkRecord(d *Declaration, rec *jobspec.Declared) error {
	got := d.Record()
	if !slices.EqualFunc(got.Params, rec.Params, func(a, b jobspec.DeclaredParam) bool {
		return a.Name == b.Name && slices.Equal(a.Shape, b.Shape)
	}) {
		return c.fail("declare", fmt.Errorf("%w: parameters %v, recorded %v", ErrMismatch, got.Params, rec.Params))
	}
	if got.InitSHA256 != rec.InitSHA256 {
		return c.fail("declare", fmt.Errorf("%w: initial values have sha256 %s, recorded %s (the program must be deterministic for a seed)",
			ErrMismatch, got.InitSHA256, rec.InitSHA256))
	}
	return nil
}

// Record is the declaration as the job record keeps it.
func (d *Declaration) Record() *jobspec.Declared {
	rec := &jobspec.Declared{}
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
// job.
func DeclareForSubmit(ctx context.Context, spec *jobspec.Spec, log *slog.Logger) error {
	spec.Model.Declared = nil // never trust a submitted one
	c, d, err := StartForJob(ctx, spec, log)
	if err != nil {
		return err
	}
	c.Close()
	spec.Model.Declared = d.Record()
	return nil
}
