package model

import "errors"

var (
	// ErrInvalidSpec reports a model Spec that cannot be built; the wrapping
	// message names the field (model.kind, model.inputs, ...).
	ErrInvalidSpec = errors.New("invalid model spec")
	// ErrInvalidBatch reports a Batch whose shape or labels do not fit the model.
	ErrInvalidBatch = errors.New("invalid batch")
	// ErrParamMismatch reports parameter slices that do not match the model's ParamSpecs.
	ErrParamMismatch = errors.New("parameters do not match the model")
	// ErrCorruptModel reports a model directory whose manifest or parameter
	// files are unreadable, inconsistent, or fail their sha256 check.
	ErrCorruptModel = errors.New("corrupt model files")
	// ErrByteLength reports a byte slice whose length is not a multiple of 4
	// and so cannot hold float32 values.
	ErrByteLength = errors.New("byte length is not a multiple of 4")
	// ErrInvalidPass reports a negative pass number given to WriteModel.
	ErrInvalidPass = errors.New("invalid pass number")
	// ErrNoOptimizerState reports a model directory that keeps no optimizer
	// state (written before gtrain kept it, or an export).
	ErrNoOptimizerState = errors.New("the model keeps no optimizer state")
)
