package wire

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gtrain/gtrain/api"
)

// The limits of the row calls (PullRows, PushRows, PullTablesRows,
// PushTablesRows), shared by the pserver, which refuses a call past them,
// and its client, which packs a step's tables into calls within them.
const (
	// MaxRowsPerCall bounds the ids of one call, and so the memory one
	// call makes the pserver allocate.
	MaxRowsPerCall = 1 << 20
	// MaxTablesPerCall bounds the tables of one call of several. Each is
	// a message of its own, about 100 bytes decoded for 2 on the wire: a
	// 16 MiB request of empty ones would make the pserver allocate some
	// 800 MB before any handler or credential check saw it, so the codec
	// counts them first (checkTables).
	MaxTablesPerCall = 1024
	// RowsCallBytes is what the client packs into one call of several
	// tables at most (ids and values), half the message limit: one call a
	// table kept each table's rows within the limit on their own, and a
	// table past this still goes alone.
	RowsCallBytes = maxMsg / 2
)

// checkTables refuses a request of several tables' rows with more than
// MaxTablesPerCall tables, counting them before protobuf decodes them. It
// walks gRPC's buffers in place (a push of rows spans several), skipping
// each field's value as decode does (decodeField). A field 1 of another
// wire type counts too: stricter than protobuf, which would keep it as
// unknown. The refusal is ErrMalformed, which gRPC answers Internal; the
// pserver's handler checks the count again for callers in its own process
// (InvalidArgument).
func checkTables(data mem.BufferSlice, v any) error {
	switch v.(type) {
	case *api.TablesRowsRequest, *api.TablesRowsPush:
	default:
		return nil
	}
	r := data.Reader()
	defer r.Close()
	for n := 0; r.Remaining() > 0; {
		tag, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("%w: tag: %v", ErrMalformed, err)
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		if num == 1 {
			if n++; n > MaxTablesPerCall {
				return fmt.Errorf("%w: more than %d tables in one call", ErrMalformed, MaxTablesPerCall)
			}
		}
		// Skip the value, as decode skips a field that is not its sink's;
		// a wire type protobuf does not have is refused.
		if err := decodeField(r, discard{}, num, typ); err != nil {
			return err
		}
	}
	return nil
}

// CountTables refuses the raw bytes of a TablesRowsPush (a push's
// PushChunk.rows) past MaxTablesPerCall tables, before protobuf decodes
// them, as checkTables does for a call.
func CountTables(b []byte) error {
	return checkTables(mem.BufferSlice{mem.SliceBuffer(b)}, (*api.TablesRowsPush)(nil))
}

// discard is a Sink that keeps nothing, for skipping a field's value.
type discard struct{}

func (discard) Reset()                          {}
func (discard) Varint(protowire.Number, uint64) {}
func (discard) DataField() protowire.Number     { return -1 }
func (discard) DataDst(int) ([]byte, error)     { return nil, ErrMalformed }
func (discard) Done() error                     { return nil }
