package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadFrame feeds hostile bytes (a program's stdout) to the frame
// reader: it must fail with a clear error or decode a frame whose payload has
// exactly the size the header says, and never panic or allocate wildly.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	_ = WriteFrame(&ok, map[string]int{"floats": 2}, []float32{1, 2})
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{5, 0, 0, 0, '{', '}', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Response
		got, err := ReadFrame(bytes.NewReader(data), &h, func() (int, error) {
			if h.Floats > len(data) { // a reader of a pipe would wait; here, bound the allocation
				return 0, ErrMalformed
			}
			return h.Floats, nil
		})
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(got) != h.Floats {
			t.Fatalf("%d floats, header says %d", len(got), h.Floats)
		}
	})
}
