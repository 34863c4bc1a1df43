// Package dataset owns what a record in a gtrain shard means: an Example
// (float32 features and a label) encoded as little-endian float32s, the JSON
// ShardMeta stored in each shard's recordio header, reading examples back
// chunk by chunk, Convert, which turns raw text or IDX data (plain or gzip)
// into train/test shards (with normalisation statistics computed beside them
// or applied from a file), and RecordOrder, the seeded order in which a pass
// reads a task's records (master and trainers compute it alike).
//
// It builds on package recordio for the byte format and must not depend on the
// cluster packages (master, trainer, pserver...); they depend on it. It writes
// only the files Convert or WriteShard are asked to write.
package dataset
