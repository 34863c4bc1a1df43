// Package model owns the built-in models that trainers run and the master
// evaluates (linear regression, softmax regression, a ReLU multi-layer
// perceptron, and the recommender: embedding rows pooled per id field, and
// optionally their pairwise dot products, under an MLP, computed on the
// rows a batch touches), their deterministic
// initialisation, and the on-disk model
// files written after every pass (model_dir/pass-NNNNN/ and model_dir/latest,
// docs/reference.md#model-files).
//
// Parameters are stored, transported and computed as float32: products go
// to one sgemm (OpenBLAS, or gonum's pure-Go kernels in a build without it:
// gemm.go), cut into fixed tiles (a weight gradient into bands of whole
// rows) so that a gradient's bits do not depend on the number of threads;
// the element-wise passes have AVX2 forms with the scalar loops' bits
// (layer_simd.go). Hosts running the same kernels give
// bit-identical outputs (README "Compute: kernels, threads and bits").
//
// The package is pure: no global state, no clock, no configuration, no
// logging. It must not import any other gtrain package but the shared
// plumbing of internal/atomicfile, which makes its files crash safe; it knows
// nothing about pservers, trainers, tasks, checkpoints or the job spec format,
// and callers convert their own configuration into a Spec.
package model
