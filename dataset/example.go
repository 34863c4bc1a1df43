package dataset

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gtrain/gtrain/model"
)

// Example is one record: the dense features, a label that is a regression
// target or, for classification shards, the class index as a float, and, in a
// shard with id fields (ShardMeta.IDFields), the ids of each field.
type Example struct {
	Features []float32
	Label    float32
	// IDs[f] are the ids of field ShardMeta.IDFields[f]; nil in a dense shard.
	IDs [][]uint64
	// Weights[f] holds one weight per id of IDs[f] for a weighted field and is
	// empty for the others; Weights itself may be nil when no field is weighted.
	Weights [][]float32
}

const float32Size = 4

// EncodeExample lays out the features then the label as little-endian
// float32s, then, when e has ids, each field's ids (see appendIDs). A record
// without ids is byte for byte what it was before id fields existed.
func EncodeExample(e Example) []byte {
	b := make([]byte, 0, (len(e.Features)+1)*float32Size)
	for _, x := range e.Features {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Label))
	return appendIDs(b, e)
}

// littleEndian is whether this host stores a float32 as the records do.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// DecodeExample is the inverse of EncodeExample for a record of the given
// number of features and no ids (DecodeRecord reads a shard with id fields).
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
	// One copy where the host is little-endian, as the records are: a
	// trainer decodes a micro-batch's records while its push waits for the
	// step, and that read can be what the next step waits for.
	if littleEndian {
		copy(model.Float32Bytes(e.Features), b[:features*float32Size]) // shares e.Features' memory there
	} else {
		for i := range e.Features {
			e.Features[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*float32Size:]))
		}
	}
	e.Label = math.Float32frombits(binary.LittleEndian.Uint32(b[features*float32Size:]))
	return e, nil
}
