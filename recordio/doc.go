// Package recordio owns the on-disk format of gtrain's record shards: a file of
// opaque records grouped in checksummed chunks, with a chunk index at the end so
// that a reader (the master cutting tasks, a trainer reading one task) can list
// the chunks and read any one of them without reading the file whole.
//
// Byte layout (all integers little-endian, all checksums CRC-32C):
//
//	header  "GTRC" | version u16 | meta length u32 | meta bytes | crc u32
//	                 (crc over everything before it in the header)
//	chunk   "GTCK" | records u32 | payload length u32 | crc u32 | payload
//	                 (crc over records, payload length and payload;
//	                  payload = per record: length u32 | bytes)
//	index   per chunk: offset u64 | records u32 | length u32, then crc u32
//	                 (length = chunk header + payload; crc over the entries)
//	footer  index offset u64 | chunk count u32 | crc u32 | "GTRI"
//	                 (fixed 20 bytes, the last bytes of the file)
//
// The sections are contiguous: the first chunk starts where the header ends,
// every chunk where the previous one ends, the index where the last chunk
// ends, and the footer where the index ends. Readers check all of this, so a
// damaged byte anywhere is reported as a *CorruptError naming the file and the
// offset of the damaged structure, and is never returned as data.
//
// The package knows nothing of what a record means (see package dataset) and
// must not touch files other than those it is asked to read; it never closes
// the io.Writer it writes to.
package recordio
