package dataset

// ShardReader reads chunks of one shard with its file and index opened once:
// a sync trainer reads a few chunks every step, and opening the shard (its
// index read and decoded) for each cost more than the step's compute.
type ShardReader struct{ s *shard }

// OpenShard opens the shard at path for reading chunks.
func OpenShard(path string) (*ShardReader, error) {
	s, err := openShard(path)
	if err != nil {
		return nil, err
	}
	return &ShardReader{s: s}, nil
}

// ChunkExamples decodes chunk number chunk (see ReadChunkExamples).
func (r *ShardReader) ChunkExamples(chunk int) ([]Example, error) { return r.s.chunkExamples(chunk) }

// Close closes the shard's file.
func (r *ShardReader) Close() error { return r.s.file.Close() }
