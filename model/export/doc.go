// Package export writes a model fetched with `gctl job model` in the
// formats other stacks read: npz (numpy's zip of .npy arrays, also what
// PyTorch users load with numpy), safetensors (Hugging Face's header +
// raw little-endian tensors) and raw (the model files themselves, which
// init_from.dir reads back). The .npy, .npz and safetensors encodings are
// written here with archive/zip and encoding/json: they are small, fixed
// formats, not worth a dependency. Every format goes with manifest.json:
// names, shapes, each parameter's sha256 (of its little-endian float32
// bytes, equal to the sha256 of numpy's arr.tobytes()) and the job's spec.
// A recommender's embedding tables go with the parameters: each table's
// ids (uint64) and rows (float32, rows × dim), under the names of the pass
// directory in raw.
//
// It is pure file writing: it must not know jobs, agents or the wire.
package export
