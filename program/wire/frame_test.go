package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	req := &Request{Op: OpGradient, Inputs: 2, N: 1, Params: []Tensor{{Name: "w", Shape: []int{2, 1}}}}
	if err := WriteFrame(&buf, req, []float32{1, 2}, []float32{0}, []float32{0.5, -0.25}); err != nil {
		t.Fatal(err)
	}
	var got Request
	data, err := ReadFrame(&buf, &got, got.PayloadFloats)
	if err != nil {
		t.Fatal(err)
	}
	if got.Op != OpGradient || got.N != 1 || len(data) != 5 || data[4] != -0.25 {
		t.Fatalf("got %+v %v", got, data)
	}
	if _, err := ReadFrame(&buf, &got, got.PayloadFloats); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestReadFrameRejects(t *testing.T) {
	frame := func(hlen uint32, header string, payload int) []byte {
		b := binary.LittleEndian.AppendUint32(nil, hlen)
		return append(append(b, header...), make([]byte, payload)...)
	}
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"zero header":      {frame(0, "", 0), ErrMalformed},
		"huge header":      {frame(MaxHeader+1, "", 0), ErrMalformed},
		"not json":         {frame(5, "hello", 0), ErrMalformed},
		"not an object":    {frame(2, "[]", 0), ErrMalformed},
		"short header":     {frame(10, "{}", 0), io.ErrUnexpectedEOF},
		"short payload":    {frame(7, `{"n":1}`, 3), io.ErrUnexpectedEOF},
		"negative payload": {frame(8, `{"n":-1}`, 0), ErrMalformed},
	}
	for name, tc := range cases {
		var h struct{ N int }
		_, err := ReadFrame(bytes.NewReader(tc.in), &h, func() (int, error) { return h.N, nil })
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

func TestRequestPayloadFloats(t *testing.T) {
	r := &Request{Op: "train"}
	if _, err := r.PayloadFloats(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unknown op: %v", err)
	}
	r = &Request{Op: OpEvaluate, Inputs: 3, N: 2, Params: []Tensor{{Name: "w", Shape: []int{3, 0}}}}
	if _, err := r.PayloadFloats(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("zero dimension: %v", err)
	}
}

// TestReadFrameText: text where a frame should start (a program's print)
// is named as such, never as an absurd header length.
// A short print before a frame (print(), print(1): "\n", "1\n") makes a
// length that may be within bounds: named as text too, at once, not after
// waiting for a header that never comes. A frame whose length's first byte
// is printable ('A', a 65-byte header) is read as a frame.
func TestReadFrameText(t *testing.T) {
	var answer bytes.Buffer
	if err := WriteFrame(&answer, Response{LossSum: new(float64)}); err != nil {
		t.Fatal(err)
	}
	for _, stray := range []string{"hello world\n", "\n", "1\n", "\r\n"} {
		in := append([]byte(stray), answer.Bytes()...)
		_, err := ReadFrame(bytes.NewReader(in), &Response{}, func() (int, error) { return 0, nil })
		var te *TextError
		if !errors.As(err, &te) || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "print diagnostics to stderr") {
			t.Errorf("%q before a frame: got %v", stray, err)
		}
	}
	header := `{"loss_sum":1.5,"floats":0` + strings.Repeat(" ", 65-27) + "}"
	in := append(binary.LittleEndian.AppendUint32(nil, uint32(len(header))), header...)
	var r Response
	if _, err := ReadFrame(bytes.NewReader(in), &r, func() (int, error) { return 0, nil }); err != nil || r.LossSum == nil || *r.LossSum != 1.5 {
		t.Fatalf("a frame of a 65-byte header (length byte 'A'): %v, %+v", err, r)
	}
}
