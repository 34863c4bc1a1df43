package recordio

import (
	"encoding/binary"
	"hash/crc32"
	"math"
)

// Version is the format version this package writes and reads.
const Version = 1

const (
	headerMagic = "GTRC"
	chunkMagic  = "GTCK"
	footerMagic = "GTRI"

	// headerFixedSize is magic + version + meta length; the meta bytes and the
	// header crc follow.
	headerFixedSize = 4 + 2 + 4
	crcSize         = 4

	// MetaOffset is where the header's meta bytes start in a file.
	MetaOffset = headerFixedSize

	// ChunkHeaderSize is the size of the header in front of every chunk payload.
	ChunkHeaderSize = 4 + 4 + 4 + 4

	indexEntrySize = 8 + 4 + 4
	footerSize     = 8 + 4 + 4 + 4

	// minFileSize is a file with empty meta and no chunks.
	minFileSize = headerFixedSize + crcSize + crcSize + footerSize

	// recordLengthSize is the length prefix of every record in a payload.
	recordLengthSize = 4

	// maxChunkLength bounds a chunk (header + payload) so that it fits the u32
	// length of an index entry.
	maxChunkLength = math.MaxUint32
)

// castagnoli is read-only after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// chunkCRC covers the record count and payload length as well as the payload,
// so a damaged chunk header cannot pass as a different, valid chunk.
func chunkCRC(header []byte, payload []byte) uint32 {
	crc := crc32.Update(0, castagnoli, header[4:12])
	return crc32.Update(crc, castagnoli, payload)
}

func crc32Castagnoli(b []byte) uint32 {
	return crc32.Checksum(b, castagnoli)
}

func crc32Update(crc uint32, b []byte) uint32 {
	return crc32.Update(crc, castagnoli, b)
}
