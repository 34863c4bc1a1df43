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
//
// Each class has a budget of its own (classLimit) inside the pool's
// (limit): with one budget for all, the 1 MiB chunks a process marshals
// filled it and left no room for the 16 KiB frames it reads (gRPC's frame
// size is fixed), so every frame of a push or a pull was allocated anew
// (BenchmarkPushPullMLP: 15 MB allocated per step, nearly the whole
// traffic).
type bufferPool struct {
	mu         sync.Mutex
	free       map[int][]*[]byte // by capacity class
	bytes      int               // held in free
	limit      int
	classLimit int
}

// pooledMin is the smallest buffer worth keeping: smaller ones go to
// gRPC's default pool (headers and small messages; their garbage is small).
const pooledMin = 4 << 10

// poolLimit bounds the bytes the pool keeps per process, and classLimit
// those of one class: the chunks of a push and a pull in flight and the
// frames they arrive in (MLP 784-1024-1024-10 moves 7.4 MB each way per
// step). The pool allocates only when a class's list is empty, so it never
// keeps more of a class than was in flight at once, which the heap held
// anyway (as garbage, without it). BenchmarkPushPullMLP allocated 15 MB per
// step with one 4 MiB budget, 0.1 MB with these; pserver_memory read
// 165-169 MiB with the 4 MiB pool, 165 without, on one machine.
const (
	poolLimit  = 16 << 20
	classLimit = 8 << 20
)

var sharedPool = &bufferPool{free: map[int][]*[]byte{}, limit: poolLimit, classLimit: classLimit}

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
	if p.bytes+c > p.limit || (len(p.free[c])+1)*c > p.classLimit {
		return // let the collector have it
	}
	p.free[c] = append(p.free[c], buf)
	p.bytes += c
}
