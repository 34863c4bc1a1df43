package recordio

import (
	"bytes"
	"testing"
)

func FuzzReadIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("GTRC"))
	f.Add(encode(f, nil, 1, nil))
	f.Add(encode(f, []byte(`{"features":2}`), 2, numberedRecords(5)))
	f.Add(encode(f, nil, 3, [][]byte{{}, {}, []byte("x")}))
	full := encode(f, []byte("meta"), 4, numberedRecords(9))
	f.Add(full[:len(full)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ReadIndexFrom(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			if !IsDamaged(err) {
				t.Fatalf("in-memory read failed with %v, want only ErrCorrupt/ErrTruncated", err)
			}
			return
		}
		total := 0
		for i := range ix.Chunks {
			recs, err := ix.ReadChunk(bytes.NewReader(data), i)
			if err != nil {
				if !IsDamaged(err) {
					t.Fatalf("chunk %d: %v, want only ErrCorrupt/ErrTruncated", i, err)
				}
				return
			}
			total += len(recs)
		}
		if total != ix.Records() {
			t.Fatalf("chunks held %d records, index says %d", total, ix.Records())
		}
	})
}
