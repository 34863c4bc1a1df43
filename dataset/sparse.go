package dataset

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
)

// IDField names one id field of a shard's records (ShardMeta.IDFields): a
// list of 64-bit ids per record, with a float32 weight per id when Weighted.
// Ids are opaque: a recommender looks each up as a row of the field's table.
type IDField struct {
	Name     string `json:"name"`
	Weighted bool   `json:"weighted,omitempty"`
}

// Bounds of the sparse part of a record, so that a hostile or damaged shard
// cannot size an allocation and a converter refuses a record no table could
// serve in one pull.
const (
	// MaxIDsPerField bounds the ids of one field in one record.
	MaxIDsPerField = 4096
	// MaxIDFields bounds the id fields of a shard.
	MaxIDFields = 64
)

// idFieldName is what a field may be called: it becomes a table name in a job
// spec and a key in YAML and JSON.
var idFieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

func validateIDFields(fields []IDField) error {
	if len(fields) > MaxIDFields {
		return fmt.Errorf("%d id fields, at most %d", len(fields), MaxIDFields)
	}
	seen := map[string]bool{}
	for i, f := range fields {
		if !idFieldName.MatchString(f.Name) {
			return fmt.Errorf("id field %d is named %.70q: a name is a letter then up to 63 letters, digits or _", i, f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("id field %q is named twice", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// checkIDs says whether e's sparse part fits fields: one id list per field
// (none at all without fields), at most MaxIDsPerField ids each, and one
// finite weight per id exactly in the weighted fields.
func checkIDs(e Example, fields []IDField) error {
	if len(e.IDs) != len(fields) {
		return fmt.Errorf("%d id lists, the shard has %d id fields", len(e.IDs), len(fields))
	}
	if len(e.Weights) != 0 && len(e.Weights) != len(fields) {
		return fmt.Errorf("%d weight lists, the shard has %d id fields", len(e.Weights), len(fields))
	}
	for f, field := range fields {
		n, w := len(e.IDs[f]), weightsOf(e, f)
		switch {
		case n > MaxIDsPerField:
			return fmt.Errorf("field %s has %d ids, at most %d", field.Name, n, MaxIDsPerField)
		case field.Weighted && len(w) != n:
			return fmt.Errorf("field %s has %d ids and %d weights, want one weight per id", field.Name, n, len(w))
		case !field.Weighted && len(w) != 0:
			return fmt.Errorf("field %s is not weighted but has %d weights", field.Name, len(w))
		}
		for _, x := range w {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("field %s has weight %v, want a finite number", field.Name, x)
			}
		}
	}
	return nil
}

func weightsOf(e Example, f int) []float32 {
	if f < len(e.Weights) {
		return e.Weights[f]
	}
	return nil
}

// appendIDs appends the sparse part of a record: per field, its id count
// (uint32), the ids (uint64) and, when it has weights, one float32 per id;
// all little-endian.
func appendIDs(b []byte, e Example) []byte {
	for f, ids := range e.IDs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ids)))
		for _, id := range ids {
			b = binary.LittleEndian.AppendUint64(b, id)
		}
		for _, w := range weightsOf(e, f) {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(w))
		}
	}
	return b
}

// decodeIDs reads the sparse part b of a record into e, checking every count
// against MaxIDsPerField and the bytes left before allocating.
func decodeIDs(b []byte, e *Example, fields []IDField) error {
	e.IDs = make([][]uint64, len(fields))
	for f, field := range fields {
		if len(b) < 4 {
			return fmt.Errorf("%w: the record ends before the id count of field %s", ErrExampleSize, field.Name)
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		per := 8
		if field.Weighted {
			per = 12
		}
		if n > MaxIDsPerField || n*per > len(b) {
			return fmt.Errorf("%w: field %s has %d ids (at most %d), %d bytes are left for them",
				ErrExampleSize, field.Name, n, MaxIDsPerField, len(b))
		}
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		e.IDs[f], b = ids, b[8*n:]
		if field.Weighted {
			if e.Weights == nil {
				e.Weights = make([][]float32, len(fields))
			}
			w := make([]float32, n)
			for i := range w {
				w[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			e.Weights[f], b = w, b[4*n:]
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes follow the last id field", ErrExampleSize, len(b))
	}
	return nil
}

// DecodeRecord decodes a record of a shard with the given number of dense
// features and id fields (ShardMeta.Features, ShardMeta.IDFields). Without id
// fields it is DecodeExample: a dense shard's records are features and label
// only, as before id fields existed.
func DecodeRecord(b []byte, features int, fields []IDField) (Example, error) {
	if len(fields) == 0 {
		return DecodeExample(b, features)
	}
	if features < 0 || features > len(b)/float32Size-1 {
		return Example{}, fmt.Errorf("%w: record is %d bytes, too short for %d features and a label",
			ErrExampleSize, len(b), features)
	}
	dense := (features + 1) * float32Size
	e, err := DecodeExample(b[:dense], features)
	if err != nil {
		return Example{}, err
	}
	if err := decodeIDs(b[dense:], &e, fields); err != nil {
		return Example{}, err
	}
	return e, nil
}
