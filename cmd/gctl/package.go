package main

import (
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program"
)

// packWorkspace packs dir (`job start --package DIR`) as the job's uploaded
// workspace and names it in the spec by its SHA-256; the spec must not name
// a shared workspace too. Errors are bad input (exit 2).
func packWorkspace(spec *jobspec.Spec, dir string) ([]byte, error) {
	if !spec.Model.IsProgram() {
		return nil, usagef("--package uploads a model program's workspace; the spec's model.kind is %q, not %q", spec.Model.Kind, jobspec.KindProgram)
	}
	if spec.Model.Workspace != "" {
		return nil, usagef("--package %s replaces model.workspace (%s): leave model.workspace out of the spec", dir, spec.Model.Workspace)
	}
	data, err := program.Pack(dir)
	if err != nil {
		return nil, usagef("--package: %v", err)
	}
	spec.Model.Package = program.PackageSHA256(data)
	return data, nil
}
