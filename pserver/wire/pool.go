package wire

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// bufferPool is the pserver connections' gRPC buffer pool. gRPC's default
// keeps its buffers in sync.Pools, which every garbage collection empties,
// and zeroes each buffer it hands out. A pserver collects very often (it
// runs under a tight memory limit, see pserver/runtime.go), so nearly every
// HTTP/2 frame and every 1 MiB message of a push or a pull was a fresh
// allocation, and allocating during a collection made the pserver assist
// it: measured on MLP 784-1024-1024-10, 40% of a pserver's CPU went to the
// collector and to allocation. This pool keeps what it is given back
// across collections, up to a bound of bytes, and hands buffers out as they
// are: gRPC overwrites every byte it uses (it reads frames into them,
// encodes messages into them), and only gtrain's own data passes here.
type bufferPool struct {
	mu    sync.Mutex
	free  map[int][]*[]byte // by capacity class
	bytes int               // held in free
	limit int
}

// pooledMin is the smallest buffer worth keeping: smaller ones go to
// gRPC's default pool (headers and small messages; their garbage is small).
const pooledMin = 4 << 10

// poolLimit bounds the bytes the pool keeps per process: a few pushes'
// and pulls' chunks in flight, well inside the pserver's 16 MiB headroom
// (pserver_memory read 165-169 MiB with it, 165 without, on one machine).
const poolLimit = 4 << 20

var sharedPool = &bufferPool{free: map[int][]*[]byte{}, limit: poolLimit}

var _ mem.BufferPool = (*bufferPool)(nil)

// class is the capacity a buffer of size bytes is allocated with: the next
// power of two up to 64 KiB (HTTP/2 frames, small messages), then the next
// multiple of 64 KiB (a 1 MiB chunk and its header fit one class).
func class(size int) int {
	if size <= 64<<10 {
		return 1 << bits.Len(uint(size-1))
	}
	return (size + 64<<10 - 1) &^ (64<<10 - 1)
}

func (p *bufferPool) Get(size int) *[]byte {
	if size < pooledMin {
		return mem.DefaultBufferPool().Get(size)
	}
	c := class(size)
	p.mu.Lock()
	if list := p.free[c]; len(list) > 0 {
		buf := list[len(list)-1]
		p.free[c] = list[:len(list)-1]
		p.bytes -= c
		p.mu.Unlock()
		*buf = (*buf)[:size]
		return buf
	}
	p.mu.Unlock()
	buf := make([]byte, size, c)
	return &buf
}

func (p *bufferPool) Put(buf *[]byte) {
	c := cap(*buf)
	if c < pooledMin || class(c) != c {
		mem.DefaultBufferPool().Put(buf) // not one of ours
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+c > p.limit {
		return // let the collector have it
	}
	p.free[c] = append(p.free[c], buf)
	p.bytes += c
}
