package master

import (
	"errors"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/master/core"
)

func TestTaskBlockRoundTrip(t *testing.T) {
	sts := storeStatuses(tasksPerBlock, 1)
	sts[3].Order = -7 // re-queued at the front
	got, err := decodeBlock(nil, encodeBlock(sts))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sts) {
		t.Fatalf("decoded %d statuses, want %d", len(got), len(sts))
	}
	for i := range sts {
		if !sameStatus(got[i], sts[i]) {
			t.Fatalf("status %d = %+v, want %+v", i, got[i], sts[i])
		}
	}
}

func TestTaskBlockMerge(t *testing.T) {
	old := storeStatuses(10, 1)
	change := []core.TaskStatus{storeStatuses(10, 2)[4], {ID: 12, State: core.Done, Trainer: core.NoTrainer}}
	data, err := mergeBlock(encodeBlock(old[:6]), change)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeBlock(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(old[:4:4], change[0], old[5]), change[1])
	if len(got) != len(want) {
		t.Fatalf("merged %d statuses, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !sameStatus(got[i], want[i]) {
			t.Fatalf("merged status %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTaskBlockRejectsGarbage(t *testing.T) {
	good := encodeBlock(storeStatuses(5, 1))
	for name, data := range map[string][]byte{
		"empty":          nil,
		"unknown format": append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"bad state":      {blockFormat, 1, 7, 0, 1, 0},
	} {
		if _, err := decodeBlock(nil, data); !errors.Is(err, errBadTaskBlock) {
			t.Errorf("%s: decode error %v, want errBadTaskBlock", name, err)
		}
	}
}

func TestBatchPuts(t *testing.T) {
	puts := make([]blockPut, 10)
	for i := range puts {
		puts[i] = blockPut{index: i, key: "k", data: make([]byte, 99)} // 100 bytes each
	}
	for _, c := range []struct {
		name             string
		maxOps, maxBytes int
		wantBatchSizes   []int
	}{
		{"one commit", 120, 1 << 20, []int{10}},
		{"by ops, core.Meta alone", 5, 1 << 20, []int{5, 5, 0}},
		{"by ops, core.Meta with the rest", 4, 1 << 20, []int{4, 4, 2}},
		{"by bytes", 120, 350, []int{3, 3, 3, 1}},
	} {
		got := batchPuts(puts, 2, c.maxOps, c.maxBytes)
		sizes := make([]int, len(got))
		for i, b := range got {
			sizes[i] = len(b)
		}
		if !slices.Equal(sizes, c.wantBatchSizes) {
			t.Errorf("%s: batches of %v, want %v", c.name, sizes, c.wantBatchSizes)
		}
	}
	if got := batchPuts(nil, 2, 120, 1<<20); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("no puts: %d batches, want one empty (core.Meta alone)", len(got))
	}
}
