package pserver

import (
	"errors"
	"testing"

	"github.com/gtrain/gtrain/pserver/client"
)

// valueAt is a distinct value per (section kind, param, element), so a
// misplaced copy shows.
func valueAt(kind, param, off int) float32 { return float32(kind*1_000_000 + param*10_000 + off) }

// sectionsOf builds the sections a partition's blocks would checkpoint.
func sectionsOf(blocks []client.Block, slots int) map[string][]float32 {
	out := map[string][]float32{}
	for _, b := range blocks {
		for kind := 0; kind <= slots; kind++ {
			d := make([]float32, b.Len)
			for i := range d {
				d[i] = valueAt(kind, b.Param, b.Offset+i)
			}
			name := paramSection(b.ID)
			if kind > 0 {
				name = slotSection(b.ID, kind-1)
			}
			out[name] = d
		}
	}
	return out
}

func TestRecutMatchesDirectCut(t *testing.T) {
	sizes := []int{7, 0, 130, 1, 64}
	for _, tc := range []struct{ from, to, maxBlock, slots int }{
		{2, 3, 1 << 20, 2}, {3, 2, 1 << 20, 2}, {1, 4, 16, 1}, {4, 1, 16, 0}, {2, 2, 10, 2}, {5, 3, 7, 2},
	} {
		old, err := client.Partition(sizes, tc.from, tc.maxBlock)
		if err != nil {
			t.Fatal(err)
		}
		// The new cut uses the real block size: old and new maxBlock may differ only in tests.
		next, err := client.Partition(sizes, tc.to, tc.maxBlock+3)
		if err != nil {
			t.Fatal(err)
		}
		sections := sectionsOf(old, tc.slots)
		want := sectionsOf(next, tc.slots)
		for s := range tc.to {
			mine := client.BlocksOf(next, s)
			got, err := Recut(old, sections, mine, tc.slots)
			if err != nil {
				t.Fatalf("%+v server %d: %v", tc, s, err)
			}
			if len(got) != len(mine)*(tc.slots+1) {
				t.Fatalf("%+v server %d: %d sections, want %d", tc, s, len(got), len(mine)*(tc.slots+1))
			}
			for _, sec := range got {
				w := want[sec.Name]
				if len(w) != len(sec.Data) {
					t.Fatalf("%+v: section %s has %d floats, want %d", tc, sec.Name, len(sec.Data), len(w))
				}
				for i := range w {
					if w[i] != sec.Data[i] {
						t.Fatalf("%+v: section %s[%d] = %v, want %v", tc, sec.Name, i, sec.Data[i], w[i])
					}
				}
			}
		}
	}
}

func TestRecutMissingSection(t *testing.T) {
	sizes := []int{100}
	old, _ := client.Partition(sizes, 2, 1<<20)
	next, _ := client.Partition(sizes, 3, 1<<20)
	sections := sectionsOf(old, 1)
	delete(sections, slotSection(1, 0)) // server 1's optimizer slot is lost
	if _, err := Recut(old, sections, client.BlocksOf(next, 2), 1); !errors.Is(err, ErrRecut) {
		t.Fatalf("err = %v, want ErrRecut", err)
	}
	if _, err := Recut(old, sections, client.BlocksOf(next, 0), 1); err != nil {
		t.Fatalf("server 0 needs only old server 0: %v", err)
	}
	if got := sourcesOf(old, client.BlocksOf(next, 1)); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("sources of new server 1 = %v, want [0 1]", got)
	}
}
