package checkpoint

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSave64MiB measures the full commit protocol (stream + sha256, fsync,
// rename, directory fsync, record, prune) for a 64 MiB shard; MB/s is reported
// from b.SetBytes.
func BenchmarkSave64MiB(b *testing.B) {
	const floats = 64 << 20 / 4
	const sections = 8
	snap := Snapshot{Index: 0, Meta: []byte(`{"optimizer":"adam"}`)}
	for i := range sections {
		data := make([]float32, floats/sections)
		for j := range data {
			data[j] = float32(i*j) * 1e-3
		}
		snap.Sections = append(snap.Sections, Section{Name: fmt.Sprintf("param/%d", i), Data: data})
	}
	s, err := NewStore(Config{Identity: testID, Dir: b.TempDir(), Keep: 2, Index: 0}, NewMemRecorder(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(floats * 4)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		snap.Step = int64(i + 1)
		if _, err := s.Save(ctx, snap); err != nil {
			b.Fatal(err)
		}
	}
}
