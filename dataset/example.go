package dataset

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Example is one record: the features and a label that is a regression target
// or, for classification shards, the class index as a float.
type Example struct {
	Features []float32
	Label    float32
}

const float32Size = 4

// EncodeExample lays out the features then the label as little-endian float32s.
func EncodeExample(e Example) []byte {
	b := make([]byte, 0, (len(e.Features)+1)*float32Size)
	for _, x := range e.Features {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Label))
}

// DecodeExample is the inverse of EncodeExample for a record of the given
// number of features.
func DecodeExample(b []byte, features int) (Example, error) {
	if features < 0 {
		return Example{}, fmt.Errorf("%w: %d features requested", ErrExampleSize, features)
	}
	// Compared as a record length first: (features+1)*4 overflows for a
	// features count read from a damaged or hostile shard header.
	if features > len(b)/float32Size-1 || (features+1)*float32Size != len(b) {
		want := "(features + 1) × 4"
		if features < math.MaxInt/float32Size-1 {
			want = fmt.Sprint((features + 1) * float32Size)
		}
		return Example{}, fmt.Errorf("%w: record is %d bytes, want %s (%d features + label, 4 bytes each)",
			ErrExampleSize, len(b), want, features)
	}
	e := Example{Features: make([]float32, features)}
	for i := range e.Features {
		e.Features[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*float32Size:]))
	}
	e.Label = math.Float32frombits(binary.LittleEndian.Uint32(b[features*float32Size:]))
	return e, nil
}
