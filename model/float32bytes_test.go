package model

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestFloat32BytesLittleEndian(t *testing.T) {
	p := []float32{1, -2.5, float32(math.Inf(1))}
	want := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0, 0x00, 0x00, 0x80, 0x7f}
	if got := Float32Bytes(p); !bytes.Equal(got, want) {
		t.Errorf("Float32Bytes = % x; want % x", got, want)
	}
	if got := encodeFloat32s(p); !bytes.Equal(got, want) {
		t.Errorf("portable encode = % x; want % x", got, want)
	}
	back, err := BytesFloat32(want)
	if err != nil || len(back) != 3 || back[0] != 1 || back[1] != -2.5 || !math.IsInf(float64(back[2]), 1) {
		t.Errorf("BytesFloat32 = %v, %v; want %v", back, err, p)
	}
	if got := decodeFloat32s(want); len(got) != 3 || got[0] != 1 || got[1] != -2.5 {
		t.Errorf("portable decode = %v; want %v", got, p)
	}
}

func TestBytesFloat32RoundTripsBits(t *testing.T) {
	p := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, math.Float32frombits(0x7fc00001)}
	back, err := BytesFloat32(bytes.Clone(Float32Bytes(p)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if math.Float32bits(back[i]) != math.Float32bits(p[i]) {
			t.Errorf("element %d: bits %#x; want %#x", i, math.Float32bits(back[i]), math.Float32bits(p[i]))
		}
	}
}

func TestBytesFloat32Unaligned(t *testing.T) {
	buf := make([]byte, 13)
	copy(buf[1:], Float32Bytes([]float32{1.5, -3, 7}))
	got, err := BytesFloat32(buf[1:]) // start is misaligned: must copy, not alias
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 1.5 || got[1] != -3 || got[2] != 7 {
		t.Errorf("BytesFloat32(unaligned) = %v; want [1.5 -3 7]", got)
	}
}

func TestBytesFloat32RejectsPartialValue(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		if _, err := BytesFloat32(make([]byte, n)); !errors.Is(err, ErrByteLength) {
			t.Errorf("BytesFloat32(%d bytes) error = %v; want ErrByteLength", n, err)
		}
	}
	if got, err := BytesFloat32(nil); err != nil || len(got) != 0 {
		t.Errorf("BytesFloat32(nil) = %v, %v; want empty, nil", got, err)
	}
	if got := Float32Bytes(nil); len(got) != 0 {
		t.Errorf("Float32Bytes(nil) = %v; want empty", got)
	}
}
