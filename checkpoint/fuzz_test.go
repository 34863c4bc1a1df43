package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeSnapshot feeds arbitrary bytes to the checkpoint file reader: no
// panic, no allocation sized by a length field beyond what the file holds
// (the reader checks every length against the bytes left), and every error
// is ErrCorrupt with an offset (readCandidate, its only caller, puts the
// file's path in front).
func FuzzDecodeSnapshot(f *testing.F) {
	for _, snap := range []Snapshot{
		{Identity: testID, Index: 3, Step: 123, Meta: []byte(`{"lr":0.1}`), Sections: []Section{{Name: "w", Data: []float32{1, 2, 3}}, {Name: "b", Data: []float32{4}}}},
		{Identity: testID, Index: 0, Step: 0},
		{Identity: Identity{Job: "j", Rev: 1 << 50}, Index: 7, Step: 1 << 40, Meta: []byte("{}"), Sections: []Section{{Name: "x", Data: []float32{1}}}},
	} {
		var buf bytes.Buffer
		if _, err := encodeSnapshot(context.Background(), &buf, snap); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(buf.Bytes()[:buf.Len()/2])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, _, err := decodeSnapshot(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("error is not ErrCorrupt with an offset: %v", err)
			}
			return
		}
		floats := 0
		for _, s := range snap.Sections {
			floats += len(s.Data)
		}
		if 4*floats+len(snap.Meta) > len(data) {
			t.Fatalf("decoded %d floats and %d meta bytes from %d bytes", floats, len(snap.Meta), len(data))
		}
	})
}
