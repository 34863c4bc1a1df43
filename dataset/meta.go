package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gtrain/gtrain/recordio"
)

// Part names of ShardMeta.Part.
const (
	PartTrain = "train"
	PartTest  = "test"
)

// ShardMeta is stored as JSON in the recordio header of every shard.
type ShardMeta struct {
	Features int `json:"features"`
	// Classes is 0 for regression, else labels are class indices in [0, Classes).
	Classes int    `json:"classes"`
	Part    string `json:"part"` // PartTrain or PartTest
	// Labels is filled by WriteShard; unknown (zero) in shards written
	// before it was, whose labels are then not checked at submit.
	Labels LabelStats `json:"labels,omitzero"`
	// IDFields names the id fields of every record, in their order in
	// Example.IDs; absent (and Features >= 1) in a dense shard, whose header
	// is then what it was before id fields existed.
	IDFields []IDField `json:"id_fields,omitempty"`
	// IDMax is, per id field, the largest id of the shard's records (filled
	// by WriteShard; absent in shards written before it was): what a
	// table's fixed vocabulary is checked against at submit.
	IDMax []uint64 `json:"id_max,omitempty"`
}

// MaxFeatures bounds ShardMeta.Features (the widest model input a job spec
// accepts), so that a hostile header cannot size an allocation.
const MaxFeatures = 1 << 24

// maxMetaQuote is how much of an unreadable header meta an error quotes.
const maxMetaQuote = 64

func (m ShardMeta) validate() error {
	switch {
	case m.Features < 0 || m.Features > MaxFeatures:
		return fmt.Errorf("features is %d, must be in [1, %d] (or 0 with id fields)", m.Features, MaxFeatures)
	case m.Features == 0 && len(m.IDFields) == 0:
		return fmt.Errorf("features is 0 and there are no id fields: a record needs at least one feature or id field")
	case m.Classes < 0:
		return fmt.Errorf("classes is %d, must be 0 (regression) or more", m.Classes)
	case m.Part != PartTrain && m.Part != PartTest:
		return fmt.Errorf("part is %q, must be %q or %q", m.Part, PartTrain, PartTest)
	}
	if err := validateIDFields(m.IDFields); err != nil {
		return err
	}
	return m.Labels.validate()
}

// SameLayout reports whether records of shards m and o decode alike: the same
// dense features and id fields.
func (m ShardMeta) SameLayout(o ShardMeta) bool {
	return m.Features == o.Features && slices.Equal(m.IDFields, o.IDFields)
}

// IDFieldNames lists the names of m's id fields, in order.
func (m ShardMeta) IDFieldNames() []string {
	names := make([]string, len(m.IDFields))
	for i, f := range m.IDFields {
		names[i] = f.Name
	}
	return names
}

// checkLabel rejects a label that cannot be a class index of this shard.
func (m ShardMeta) checkLabel(label float32) error {
	if m.Classes == 0 {
		return nil
	}
	if label < 0 || label >= float32(m.Classes) || label != float32(math.Trunc(float64(label))) {
		return fmt.Errorf("%w: label %v is not a class index in [0, %d)", ErrBadLabel, label, m.Classes)
	}
	return nil
}

func encodeMeta(m ShardMeta) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("dataset: ShardMeta always marshals: %v", err))
	}
	return b
}

func decodeMeta(ix *recordio.Index) (ShardMeta, error) {
	// Unknown fields are tolerated so that shards written by a newer gtrain
	// stay readable.
	var m ShardMeta
	if err := json.Unmarshal(ix.Meta, &m); err != nil {
		quote := ix.Meta[:min(len(ix.Meta), maxMetaQuote)]
		return ShardMeta{}, fmt.Errorf("%w: %s: offset %d: header meta %q (%d bytes): %v",
			ErrBadMeta, ix.Path, recordio.MetaOffset, quote, len(ix.Meta), err)
	}
	if err := m.validate(); err != nil {
		return ShardMeta{}, fmt.Errorf("%w: %s: offset %d: header meta: %v", ErrBadMeta, ix.Path, recordio.MetaOffset, err)
	}
	return m, nil
}

// ReadShardMetaIn is ReadShardMeta with the shard opened by open.
func ReadShardMetaIn(open Opener, path string) (ShardMeta, *recordio.Index, error) {
	s, err := openShard(open, path)
	if err != nil {
		return ShardMeta{}, nil, err
	}
	s.file.Close()
	return s.meta, s.index, nil
}

// ReadShardMeta reads a shard's index (not its chunks) and its meta.
func ReadShardMeta(path string) (ShardMeta, *recordio.Index, error) {
	ix, err := recordio.ReadIndex(path)
	if err != nil {
		return ShardMeta{}, nil, err
	}
	m, err := decodeMeta(ix)
	if err != nil {
		return ShardMeta{}, nil, err
	}
	return m, ix, nil
}
