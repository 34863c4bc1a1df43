package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPartitionExact(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []int
		servers  int
		maxBlock int
		want     []Block
	}{
		{
			name: "split inside a big param", sizes: []int{13, 1}, servers: 2, maxBlock: 100,
			want: []Block{
				{ID: 0, Param: 0, Offset: 0, Len: 7, Server: 0},
				{ID: 1, Param: 0, Offset: 7, Len: 6, Server: 1},
				{ID: 2, Param: 1, Offset: 0, Len: 1, Server: 1},
			},
		},
		{
			name: "maxBlock cuts within each server range", sizes: []int{10}, servers: 2, maxBlock: 3,
			want: []Block{
				{ID: 0, Param: 0, Offset: 0, Len: 3, Server: 0},
				{ID: 1, Param: 0, Offset: 3, Len: 2, Server: 0},
				{ID: 2, Param: 0, Offset: 5, Len: 3, Server: 1},
				{ID: 3, Param: 0, Offset: 8, Len: 2, Server: 1},
			},
		},
		{
			name: "zero-sized params get no block", sizes: []int{0, 2, 0, 2, 0}, servers: 2, maxBlock: 5,
			want: []Block{
				{ID: 0, Param: 1, Offset: 0, Len: 2, Server: 0},
				{ID: 1, Param: 3, Offset: 0, Len: 2, Server: 1},
			},
		},
		{
			// ranges are [0,0) [0,1) [1,1) [1,2): servers 0 and 2 own nothing.
			name: "more servers than floats", sizes: []int{1, 1}, servers: 4, maxBlock: 8,
			want: []Block{
				{ID: 0, Param: 0, Offset: 0, Len: 1, Server: 1},
				{ID: 1, Param: 1, Offset: 0, Len: 1, Server: 3},
			},
		},
		{
			name: "one server takes everything", sizes: []int{3, 4}, servers: 1, maxBlock: 4,
			want: []Block{
				{ID: 0, Param: 0, Offset: 0, Len: 3, Server: 0},
				{ID: 1, Param: 1, Offset: 0, Len: 4, Server: 0},
			},
		},
		{name: "no params", sizes: nil, servers: 3, maxBlock: 1, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Partition(tc.sizes, tc.servers, tc.maxBlock)
			if err != nil {
				t.Fatalf("Partition(%v, %d, %d): %v", tc.sizes, tc.servers, tc.maxBlock, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Partition(%v, %d, %d)\n got  %+v\n want %+v", tc.sizes, tc.servers, tc.maxBlock, got, tc.want)
			}
		})
	}
}

func TestPartitionErrors(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []int
		servers  int
		maxBlock int
		mention  string
	}{
		{"zero servers", []int{4}, 0, 4, "servers = 0"},
		{"negative servers", []int{4}, -1, 4, "servers = -1"},
		{"zero maxBlock", []int{4}, 2, 0, "maxBlock = 0"},
		{"negative size", []int{4, -3}, 2, 4, "paramSizes[1] = -3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := Partition(tc.sizes, tc.servers, tc.maxBlock)
			if !errors.Is(err, ErrPartitionArgument) {
				t.Fatalf("err = %v, want ErrPartitionArgument", err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %q, want it to mention %q", err, tc.mention)
			}
			if blocks != nil {
				t.Errorf("blocks = %v, want nil on error", blocks)
			}
		})
	}
}

func TestBlocksOfAndServerSizes(t *testing.T) {
	blocks, err := Partition([]int{13, 1}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ServerSizes(blocks, 2), []int{7, 7}; !slices.Equal(got, want) {
		t.Errorf("ServerSizes = %v, want %v", got, want)
	}
	// Server 1 owns param 0 [7,13) cut into 4+2, then param 1.
	want := []Block{
		{ID: 2, Param: 0, Offset: 7, Len: 4, Server: 1},
		{ID: 3, Param: 0, Offset: 11, Len: 2, Server: 1},
		{ID: 4, Param: 1, Offset: 0, Len: 1, Server: 1},
	}
	if got := BlocksOf(blocks, 1); !reflect.DeepEqual(got, want) {
		t.Errorf("BlocksOf(1) = %+v, want %+v", got, want)
	}
	if got := BlocksOf(blocks, 5); len(got) != 0 {
		t.Errorf("BlocksOf(5) = %+v, want none", got)
	}
	if got, want := ServerSizes(blocks, 1), []int{7}; !slices.Equal(got, want) {
		t.Errorf("ServerSizes(blocks, 1) = %v, want %v (out-of-range servers not counted)", got, want)
	}
}

// TestPartitionProperties checks the invariants on random layouts.
func TestPartitionProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		sizes := make([]int, rng.IntN(8))
		for i := range sizes {
			switch rng.IntN(4) {
			case 0:
				sizes[i] = 0
			case 1:
				sizes[i] = rng.IntN(5)
			default:
				sizes[i] = rng.IntN(3000)
			}
		}
		servers := 1 + rng.IntN(9)
		maxBlock := 1 + rng.IntN(700)
		blocks, err := Partition(sizes, servers, maxBlock)
		if err != nil {
			t.Fatalf("iter %d: Partition(%v, %d, %d): %v", iter, sizes, servers, maxBlock, err)
		}
		checkPartition(t, sizes, servers, maxBlock, blocks)

		again, err := Partition(slices.Clone(sizes), servers, maxBlock)
		if err != nil || !reflect.DeepEqual(again, blocks) {
			t.Fatalf("iter %d: second Partition differs (err %v): not deterministic", iter, err)
		}
		// Server loads are fixed before the maxBlock cuts, so they must not depend on maxBlock.
		whole, err := Partition(sizes, servers, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := ServerSizes(blocks, servers), ServerSizes(whole, servers); !slices.Equal(a, b) {
			t.Fatalf("iter %d: server sizes %v with maxBlock %d, %v without cuts", iter, a, maxBlock, b)
		}
	}
}

func checkPartition(t *testing.T, sizes []int, servers, maxBlock int, blocks []Block) {
	t.Helper()
	desc := func() string { return formatLayout(sizes, servers, maxBlock) }
	covered := make([][]int, len(sizes))
	for i, n := range sizes {
		covered[i] = make([]int, n)
	}
	prevParam, prevEnd, prevServer := 0, 0, 0
	for i, b := range blocks {
		if b.ID != i {
			t.Fatalf("%s: block %d has ID %d", desc(), i, b.ID)
		}
		if b.Len < 1 || b.Len > maxBlock {
			t.Fatalf("%s: block %+v length outside [1, %d]", desc(), b, maxBlock)
		}
		if b.Server < 0 || b.Server >= servers {
			t.Fatalf("%s: block %+v server out of range", desc(), b)
		}
		if b.Param < 0 || b.Param >= len(sizes) || b.Offset < 0 || b.Offset+b.Len > sizes[b.Param] {
			t.Fatalf("%s: block %+v outside its parameter", desc(), b)
		}
		// Vector order: blocks follow each other, servers never go back.
		if b.Param < prevParam || (b.Param == prevParam && b.Offset != prevEnd && i > 0) || b.Server < prevServer {
			t.Fatalf("%s: block %+v out of vector order after param %d end %d server %d",
				desc(), b, prevParam, prevEnd, prevServer)
		}
		for j := b.Offset; j < b.Offset+b.Len; j++ {
			covered[b.Param][j]++
		}
		prevParam, prevEnd, prevServer = b.Param, b.Offset+b.Len, b.Server
	}
	for p, c := range covered {
		for j, n := range c {
			if n != 1 {
				t.Fatalf("%s: param %d element %d covered %d times", desc(), p, j, n)
			}
		}
	}
	loads := ServerSizes(blocks, servers)
	if len(loads) != servers {
		t.Fatalf("%s: ServerSizes has %d entries", desc(), len(loads))
	}
	if hi, lo := slices.Max(loads), slices.Min(loads); hi-lo > 1 {
		t.Fatalf("%s: server loads %v differ by %d > 1", desc(), loads, hi-lo)
	}
	for s := range servers {
		own := BlocksOf(blocks, s)
		sum := 0
		for _, b := range own {
			sum += b.Len
		}
		if sum != loads[s] {
			t.Fatalf("%s: BlocksOf(%d) holds %d floats, ServerSizes says %d", desc(), s, sum, loads[s])
		}
	}
}

func formatLayout(sizes []int, servers, maxBlock int) string {
	return fmt.Sprintf("sizes %v servers %d maxBlock %d", sizes, servers, maxBlock)
}
