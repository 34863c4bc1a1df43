// Package model owns the built-in models that trainers run and the master
// evaluates (linear regression, softmax regression, a ReLU multi-layer
// perceptron, and the recommender: embedding rows pooled per id field, and
// optionally their pairwise dot products, under an MLP, computed on the
// rows a batch touches), their deterministic
// initialisation, and the on-disk model
// files written after every pass (model_dir/pass-NNNNN/ and model_dir/latest,
// docs/reference.md#model-files).
//
// Parameters are stored and transported as little-endian float32 but all
// arithmetic is done in float64 with gonum, so that the same inputs give
// bit-identical outputs on every host.
//
// The package is pure: no global state, no clock, no configuration, no
// logging. It must not import any other gtrain package but the shared
// plumbing of internal/atomicfile, which makes its files crash safe; it knows
// nothing about pservers, trainers, tasks, checkpoints or the job spec format,
// and callers convert their own configuration into a Spec.
package model
