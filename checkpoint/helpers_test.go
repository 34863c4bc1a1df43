package checkpoint

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// testID is the job identity of the tests' stores.
var testID = Identity{Job: "fit-a-line", Rev: 42}

// testSnapshot builds a deterministic shard whose values depend on step, with
// bit patterns (NaN payload, -0, Inf, subnormal) that a lossy codec would change.
func testSnapshot(index int, step int64) Snapshot {
	special := []float32{
		float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00123),
		math.Float32frombits(0x80000000), math.SmallestNonzeroFloat32,
	}
	param := make([]float32, 3000)
	for i := range param {
		param[i] = float32(step)*1000 + float32(i)*0.5
	}
	slot := make([]float32, 40000) // > one 64 KiB encode chunk
	for i := range slot {
		slot[i] = -float32(i) / float32(step+1)
	}
	return Snapshot{
		Identity: testID,
		Index:    index,
		Step:     step,
		Meta:     []byte(`{"optimizer":"adam","step":` + strconv.FormatInt(step, 10) + `}`),
		Sections: []Section{
			{Name: "param/0", Data: param},
			{Name: "slot/0/0", Data: slot},
			{Name: "special", Data: special},
			{Name: "empty", Data: nil},
		},
	}
}

// assertSameSnapshot compares bit patterns, so NaN payloads and -0 count.
func assertSameSnapshot(t *testing.T, want Snapshot, got *Snapshot) {
	t.Helper()
	if got == nil {
		t.Fatal("snapshot is nil")
	}
	if got.Identity != want.Identity || got.Index != want.Index || got.Step != want.Step {
		t.Fatalf("got job %s pserver %d step %d, want job %s pserver %d step %d",
			got.Identity, got.Index, got.Step, want.Identity, want.Index, want.Step)
	}
	if string(got.Meta) != string(want.Meta) {
		t.Fatalf("meta %q, want %q", got.Meta, want.Meta)
	}
	if len(got.Sections) != len(want.Sections) {
		t.Fatalf("%d sections, want %d", len(got.Sections), len(want.Sections))
	}
	for i, w := range want.Sections {
		g := got.Sections[i]
		if g.Name != w.Name || len(g.Data) != len(w.Data) {
			t.Fatalf("section %d is %q with %d floats, want %q with %d", i, g.Name, len(g.Data), w.Name, len(w.Data))
		}
		for j := range w.Data {
			if math.Float32bits(g.Data[j]) != math.Float32bits(w.Data[j]) {
				t.Fatalf("section %q[%d] = %#x, want %#x", w.Name, j, math.Float32bits(g.Data[j]), math.Float32bits(w.Data[j]))
			}
		}
	}
}

func newTestStore(t *testing.T, dir string, rec Recorder, keep int) *Store {
	t.Helper()
	s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: keep, Index: 0}, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustSave(t *testing.T, s *Store, step int64) Record {
	t.Helper()
	rec, err := s.Save(context.Background(), testSnapshot(s.cfg.Index, step))
	if err != nil {
		t.Fatalf("Save step %d: %v", step, err)
	}
	return rec
}

// ckptFiles lists the final checkpoint names in dir, sorted.
func ckptFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func ckptPath(dir string, index int, step int64) string {
	return filepath.Join(dir, pserverFile(index, step))
}

// pserverFile is the name of pserver index's checkpoint of step in job testID.
func pserverFile(index int, step int64) string {
	return fileName(fileStem(testID, pserverOwner(index)), step)
}
