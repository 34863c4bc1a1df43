package client

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrPartitionArgument is returned by Partition when an argument cannot
// describe a valid partition; the wrapping message names the argument.
var ErrPartitionArgument = errors.New("invalid partition argument")

// Block is a contiguous piece of one parameter, owned by one pserver.
// Blocks are the unit of push, pull, optimisation and checkpointing, so a
// pserver never has to hold a whole large parameter.
type Block struct {
	ID     int // 0-based, in order of the concatenated parameter vector
	Param  int // index into the paramSizes given to Partition
	Offset int // first element within the parameter
	Len    int // number of floats, 1..maxBlock
	Server int // owning pserver, 0..servers-1
}

// Partition spreads the parameters over servers by size rather than by
// parameter, so one huge embedding cannot overload a single pserver.
//
// All parameters are concatenated, in order, into one virtual vector of N
// floats; server i owns [i*N/servers, (i+1)*N/servers), so server loads differ
// by at most one float. Each server's range is cut at parameter boundaries and
// then into blocks of at most maxBlock floats. Zero-sized parameters get no
// block, and with more servers than floats some servers own nothing.
// The result is a pure function of the arguments.
func Partition(paramSizes []int, servers, maxBlock int) ([]Block, error) {
	if servers < 1 {
		return nil, fmt.Errorf("%w: servers = %d, must be >= 1", ErrPartitionArgument, servers)
	}
	if maxBlock < 1 {
		return nil, fmt.Errorf("%w: maxBlock = %d, must be >= 1", ErrPartitionArgument, maxBlock)
	}
	total := 0
	for i, size := range paramSizes {
		if size < 0 {
			return nil, fmt.Errorf("%w: paramSizes[%d] = %d, must be >= 0", ErrPartitionArgument, i, size)
		}
		if size > math.MaxInt-total {
			return nil, fmt.Errorf("%w: paramSizes[%d] = %d makes the total overflow int", ErrPartitionArgument, i, size)
		}
		total += size
	}
	// serverStart computes i*N/servers; guard the product so the split stays exact.
	if total > 0 && servers > math.MaxInt/total {
		return nil, fmt.Errorf("%w: servers = %d times %d floats overflows int", ErrPartitionArgument, servers, total)
	}

	var blocks []Block
	server := 0
	serverEnd := serverStart(1, total, servers)
	paramStart := 0 // position of the current parameter in the virtual vector
	for param, size := range paramSizes {
		pos := paramStart
		paramEnd := paramStart + size
		for pos < paramEnd {
			for pos >= serverEnd { // skip servers whose range is empty or exhausted
				server++
				serverEnd = serverStart(server+1, total, servers)
			}
			pieceEnd := min(paramEnd, serverEnd)
			for pos < pieceEnd {
				n := min(maxBlock, pieceEnd-pos)
				blocks = append(blocks, Block{
					ID:     len(blocks),
					Param:  param,
					Offset: pos - paramStart,
					Len:    n,
					Server: server,
				})
				pos += n
			}
		}
		paramStart = paramEnd
	}
	return blocks, nil
}

// serverStart is the first position of server i's range in a vector of
// total floats split over servers; serverStart(servers) == total.
func serverStart(i, total, servers int) int {
	return i * total / servers
}

// BlocksOf returns, in ID order, the blocks owned by server.
func BlocksOf(blocks []Block, server int) []Block {
	var own []Block
	for _, b := range blocks {
		if b.Server == server {
			own = append(own, b)
		}
	}
	return own
}

// ServerSizes returns the number of floats each of the servers owns.
// Blocks whose Server is outside [0, servers) are not counted.
func ServerSizes(blocks []Block, servers int) []int {
	sizes := make([]int, max(servers, 0))
	for _, b := range blocks {
		if b.Server >= 0 && b.Server < len(sizes) {
			sizes[b.Server] += b.Len
		}
	}
	return sizes
}

// RegionOffsets places the blocks one pserver holds one after another, in
// ID order, in a shared-memory region's halves (pserver/region): each
// block's first float, and the floats of a half. The trainer and the
// pserver both place them so.
func RegionOffsets(blocks []Block) (map[int]int, int) {
	blocks = slices.SortedFunc(slices.Values(blocks), func(a, b Block) int { return a.ID - b.ID })
	offsets, n := make(map[int]int, len(blocks)), 0
	for _, b := range blocks {
		offsets[b.ID] = n
		n += b.Len
	}
	return offsets, n
}
