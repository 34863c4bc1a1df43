package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// Limits of one frame: a header is small JSON; a payload carries a whole
// model's parameters plus one batch of records.
const (
	MaxHeader  = 1 << 20
	MaxPayload = 1 << 31 // floats*4; 2 GiB
)

// ErrMalformed marks a frame that breaks the format.
var ErrMalformed = errors.New("malformed frame")

// Frame is one message: a JSON header and its float32 payload.
type Frame struct {
	Header  []byte // one JSON object
	Payload []float32
}

// WriteFrame writes header (marshalled to JSON) and payload as one frame.
func WriteFrame(w io.Writer, header any, payload ...[]float32) error {
	h, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	if len(h) > MaxHeader {
		return fmt.Errorf("header of %d bytes is over %d: %w", len(h), MaxHeader, ErrMalformed)
	}
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	buf := make([]byte, 4+len(h)+4*n)
	binary.LittleEndian.PutUint32(buf, uint32(len(h)))
	copy(buf[4:], h)
	off := 4 + len(h)
	for _, p := range payload {
		for _, v := range p {
			binary.LittleEndian.PutUint32(buf[off:], math.Float32bits(v))
			off += 4
		}
	}
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads one frame. floats tells, from the decoded header, how many
// float32 values follow it (the header is decoded into into first); a
// negative or oversized count is malformed. io.EOF means the stream ended
// cleanly before a frame; a frame cut short is io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, into any, floats func() (int, error)) ([]float32, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	hlen := binary.LittleEndian.Uint32(lenBuf[:])
	if hlen == 0 || hlen > MaxHeader {
		if isText(lenBuf[:1]) {
			return nil, &TextError{Start: append([]byte(nil), lenBuf[:]...)}
		}
		return nil, fmt.Errorf("header length %d not in [1, %d]: %w", hlen, MaxHeader, ErrMalformed)
	}
	// The header's first byte before the rest: after a stray "\n" or
	// "1\n" on stdout the length read is the text's and part of the real
	// one, often within bounds, and reading that many bytes would wait for
	// ever (the timeout) for what never comes.
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h[:1]); err != nil {
		return nil, unexpected(err)
	}
	if h[0] != '{' {
		if isText(lenBuf[:1]) {
			return nil, &TextError{Start: append(lenBuf[:], h[0])}
		}
		return nil, fmt.Errorf("header starts with %q, not a JSON object's {: %w", h[:1], ErrMalformed)
	}
	if _, err := io.ReadFull(r, h[1:]); err != nil {
		return nil, unexpected(err)
	}
	if err := json.Unmarshal(h, into); err != nil {
		return nil, fmt.Errorf("header %q: %v: %w", clip(h), err, ErrMalformed)
	}
	n, err := floats()
	if err != nil {
		return nil, err
	}
	if n < 0 || int64(n)*4 > MaxPayload {
		return nil, fmt.Errorf("payload of %d floats: %w", n, ErrMalformed)
	}
	raw := make([]byte, 4*n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, unexpected(err)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// TextError is text where a frame should start: a program printed to its
// stdout, which carries frames only. Told only of a frame already broken
// (a length out of bounds, or a header not starting with {) that starts
// with a printable byte or white space: a frame's length is at most
// MaxHeader, so four printable bytes are never one, and a length's first
// byte may be printable, but then its header starts with {.
type TextError struct {
	Start []byte // what the program wrote, as far as the reader has it
}

func (e *TextError) Error() string {
	return fmt.Sprintf("your program wrote non-protocol output on stdout (%q); print diagnostics to stderr", clip(e.Start))
}

// Unwrap makes a TextError a malformed frame.
func (e *TextError) Unwrap() error { return ErrMalformed }

// isText reports whether b is printable ASCII or white space.
func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// clip shortens a header quoted in an error.
func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
