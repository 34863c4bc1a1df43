package dataset

import (
	"fmt"
	"os"

	"github.com/gtrain/gtrain/recordio"
)

// ReadChunkExamples decodes chunk number chunk of the shard at path. Damage is
// reported as a recordio.CorruptError naming the file and offset.
func ReadChunkExamples(path string, chunk int) ([]Example, error) {
	s, err := openShard(os.Open, path)
	if err != nil {
		return nil, err
	}
	defer s.file.Close()
	return s.chunkExamples(chunk)
}

// ReadAll reads every record of the given shards, in the order given. All
// shards must have the same number of features and the same id fields.
func ReadAll(paths []string) ([]Example, error) { return ReadAllIn(os.Open, paths) }

// ReadAllIn is ReadAll with each shard opened by open.
func ReadAllIn(open Opener, paths []string) ([]Example, error) {
	var out []Example
	var first ShardMeta
	for i, path := range paths {
		s, err := openShard(open, path)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = s.meta
		} else if !s.meta.SameLayout(first) {
			s.file.Close()
			return nil, fmt.Errorf("%w: %s has %d features and id fields %q, %s has %d and %q", ErrMetaMismatch,
				path, s.meta.Features, s.meta.IDFieldNames(), paths[0], first.Features, first.IDFieldNames())
		}
		for c := range s.index.Chunks {
			examples, err := s.chunkExamples(c)
			if err != nil {
				s.file.Close()
				return nil, err
			}
			out = append(out, examples...)
		}
		s.file.Close()
	}
	return out, nil
}

// shard is an open shard whose index and meta have been read.
type shard struct {
	file  *os.File
	index *recordio.Index
	meta  ShardMeta
}

// Opener opens a shard for reading: os.Open, or a role's
// confine.Roots.Open, which refuses a path that leads out of its job's roots.
type Opener func(path string) (*os.File, error)

func openShard(open Opener, path string) (*shard, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dataset: %w", err)
	}
	ix, err := recordio.ReadIndexFrom(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	m, err := decodeMeta(ix)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &shard{file: f, index: ix, meta: m}, nil
}

func (s *shard) chunkExamples(chunk int) ([]Example, error) {
	records, err := s.index.ReadChunk(s.file, chunk)
	if err != nil {
		return nil, err
	}
	out := make([]Example, len(records))
	for i, r := range records {
		if out[i], err = s.decodeRecord(chunk, i, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeRecord decodes record i of chunk and checks it against the shard's
// metadata; an error names the file, chunk and record.
func (s *shard) decodeRecord(chunk, i int, r []byte) (Example, error) {
	e, err := DecodeRecord(r, s.meta.Features, s.meta.IDFields)
	if err == nil {
		err = s.meta.checkLabel(e.Label)
	}
	if err != nil {
		return Example{}, fmt.Errorf("%s: chunk %d (offset %d), record %d: %w", s.index.Path, chunk, s.index.Chunks[chunk].Offset, i, err)
	}
	return e, nil
}
