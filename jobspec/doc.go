// Package jobspec owns the job spec that `gctl job start -f job.yaml` submits
// (docs/reference.md#job-names, #job-spec): strict YAML parsing, defaults, path
// resolution against the spec file's directory, validation, and the checks
// against the training data that only the server can run (CheckData, with the
// file system injected).
//
// Every rejection names the YAML path of the offending field ("model.inputs",
// "optimizer.learning_rate") and wraps ErrInvalidSpec, so that gctl can map it
// to exit code 2.
//
// The package is pure: Validate never touches the file system, nothing reads
// the clock or global configuration. It must not import any gtrain package
// other than model (whose Spec.Validate owns the model rules), and it knows
// nothing about etcd, processes or how a job is run.
package jobspec
