package wire

import (
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
// MaxTablesPerCall tables, counting them before protobuf decodes them.
func checkTables(data mem.BufferSlice, v any) error {
	switch v.(type) {
	case *api.TablesRowsRequest, *api.TablesRowsPush:
	default:
		return nil
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	} else {
		b = data.Materialize()
	}
	n := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(l))
		}
		if b = b[l:]; num == 1 {
			if n++; n > MaxTablesPerCall {
				return fmt.Errorf("%w: more than %d tables in one call", ErrMalformed, MaxTablesPerCall)
			}
		}
		l = protowire.ConsumeFieldValue(num, typ, b)
		if l < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(l))
		}
		b = b[l:]
	}
	return nil
}
