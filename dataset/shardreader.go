package dataset

// ShardReader reads chunks of one shard with its file and index opened once:
// a sync trainer reads a few chunks every step, and opening the shard (its
// index read and decoded) for each cost more than the step's compute.
type ShardReader struct{ s *shard }

// OpenShard opens the shard at path (with open) for reading chunks.
func OpenShard(open Opener, path string) (*ShardReader, error) {
	s, err := openShard(open, path)
	if err != nil {
		return nil, err
	}
	return &ShardReader{s: s}, nil
}

// ChunkRecords reads chunk number chunk's records undecoded (its checksum
// checked): a reader that needs a few of them decodes only those
// (DecodeRecord), as a sync trainer does with the shuffled records of its
// micro-batches.
func (r *ShardReader) ChunkRecords(chunk int) ([][]byte, error) {
	return r.s.index.ReadChunk(r.s.file, chunk)
}

// DecodeRecord decodes record i of chunk, as ChunkRecords read it, checked
// as ReadChunkExamples checks every record.
func (r *ShardReader) DecodeRecord(chunk, i int, record []byte) (Example, error) {
	return r.s.decodeRecord(chunk, i, record)
}

// Close closes the shard's file.
func (r *ShardReader) Close() error { return r.s.file.Close() }
