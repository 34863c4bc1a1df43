// Package wiretest helps test wire.Sink implementations.
package wiretest

import (
	"math/rand/v2"

	"google.golang.org/grpc/mem"
)

// Split cuts wire bytes into gRPC buffers at the given sizes (then the rest),
// as frames arrive, so a test can check that a Sink decodes across buffers.
func Split(b []byte, sizes ...int) mem.BufferSlice {
	var out mem.BufferSlice
	for _, n := range sizes {
		n = min(n, len(b))
		out = append(out, mem.SliceBuffer(append([]byte(nil), b[:n]...)))
		b = b[n:]
	}
	return append(out, mem.SliceBuffer(append([]byte(nil), b...)))
}

// Garbage returns up to 63 random bytes, for checking that a Sink refuses
// what is not a message without panicking.
func Garbage(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(64))
	for j := range b {
		b[j] = byte(r.IntN(256))
	}
	return b
}
