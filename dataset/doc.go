// Package dataset owns what a record in a gtrain shard means: an Example
// (float32 features, a label and, in a shard with id fields, per field a list
// of 64-bit ids with optional weights) encoded little-endian, the JSON
// ShardMeta stored in each shard's recordio header, reading examples back
// chunk by chunk, ToRecBatch (a batch's ids per field, as the recommender takes them),
// Convert, which turns raw text, IDX or MovieLens data (plain or gzip) into
// train/test shards (with normalisation statistics computed beside them
// or applied from a file), and RecordOrder, the seeded order in which a pass
// reads a task's records (master and trainers compute it alike).
//
// It builds on package recordio for the byte format and must not depend on the
// cluster packages (master, trainer, pserver...); they depend on it. It writes
// only the files Convert or WriteShard are asked to write.
package dataset
