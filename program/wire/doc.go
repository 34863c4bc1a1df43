// Package wire is the frame format of the user-program protocol
// (docs/program-protocol.md): what the trainer (package program) and a model
// program (package sdk/gtrainprog, or the Python helper in examples/) write
// to each other over the program's stdin and stdout.
//
// A frame is a 4-byte little-endian length, that many bytes of a JSON header
// (an object), then the payload: the raw little-endian float32 tensors that
// the header lists, one after another, without padding. The header says how
// many floats follow, so a reader never guesses.
//
// The package is pure framing: no processes, no clocks. Every decoding error
// wraps ErrMalformed.
package wire
