// Package dataset owns what a record in a gtrain shard means: an Example
// (float32 features and a label) encoded as little-endian float32s, the JSON
// ShardMeta stored in each shard's recordio header, reading examples back
// chunk by chunk, and Convert, which turns raw text or IDX data into
// train/test shards (with optional normalisation statistics beside them).
//
// It builds on package recordio for the byte format and must not depend on the
// cluster packages (master, trainer, pserver...); they depend on it. It writes
// only the files Convert or WriteShard are asked to write.
package dataset
