package dataset

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestExampleRoundTrip(t *testing.T) {
	tests := []Example{
		{Features: []float32{}, Label: 3},
		{Features: []float32{1.5}, Label: -2},
		{Features: []float32{0, -0.25, 1e30, float32(math.Inf(1)), math.SmallestNonzeroFloat32}, Label: 7},
	}
	for _, e := range tests {
		b := EncodeExample(e)
		if len(b) != 4*(len(e.Features)+1) {
			t.Errorf("EncodeExample(%v) is %d bytes, want %d", e, len(b), 4*(len(e.Features)+1))
		}
		got, err := DecodeExample(b, len(e.Features))
		if err != nil {
			t.Fatalf("DecodeExample: %v", err)
		}
		if !slices.Equal(got.Features, e.Features) || got.Label != e.Label {
			t.Errorf("round trip %v gave %v", e, got)
		}
	}
}

func TestEncodeExampleIsLittleEndianFeaturesThenLabel(t *testing.T) {
	b := EncodeExample(Example{Features: []float32{1}, Label: 2})
	want := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40}
	if !slices.Equal(b, want) {
		t.Errorf("EncodeExample = % x, want % x", b, want)
	}
}

func TestDecodeExampleWrongSize(t *testing.T) {
	b := EncodeExample(Example{Features: []float32{1, 2}, Label: 3})
	_, err := DecodeExample(b, 3)
	if !errors.Is(err, ErrExampleSize) {
		t.Fatalf("DecodeExample(12 bytes, 3 features) = %v, want ErrExampleSize", err)
	}
	if !strings.Contains(err.Error(), "12 bytes, want 16") {
		t.Errorf("error %q does not name actual and expected size", err)
	}
	if _, err := DecodeExample(b, -1); !errors.Is(err, ErrExampleSize) {
		t.Errorf("DecodeExample(features -1) = %v, want ErrExampleSize", err)
	}
}
