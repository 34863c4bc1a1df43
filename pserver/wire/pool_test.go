package wire

import "testing"

// TestBufferPoolReusesAcrossCollections: a buffer given back is handed out
// again for a request of its class (also after a garbage collection, which
// empties gRPC's default pools), with the length asked for; the pool keeps
// no more than its limit.
func TestBufferPoolReusesAcrossCollections(t *testing.T) {
	p := &bufferPool{free: map[int][]*[]byte{}, limit: 3 << 20, classLimit: 3 << 20}
	chunk := 1<<20 + 40 // a 1 MiB chunk of floats and its header
	a := p.Get(chunk)
	if len(*a) != chunk || cap(*a) != class(chunk) || class(chunk) != 1<<20+64<<10 {
		t.Fatalf("Get(%d): len %d cap %d; want len %d cap %d", chunk, len(*a), cap(*a), chunk, 1<<20+64<<10)
	}
	(*a)[0] = 7
	p.Put(a)
	b := p.Get(chunk - 10)
	if &(*b)[0] != &(*a)[0] || len(*b) != chunk-10 {
		t.Fatal("a buffer given back was not handed out again for its class")
	}
	frame := p.Get(16 << 10)
	if cap(*frame) != 16<<10 {
		t.Fatalf("a 16 KiB frame got capacity %d", cap(*frame))
	}
	for range 5 {
		p.Put(p.newBuffer(chunk))
	}
	if p.bytes > p.limit {
		t.Fatalf("the pool keeps %d bytes; its limit is %d", p.bytes, p.limit)
	}
	if p.bytes == 0 {
		t.Fatal("the pool kept nothing")
	}
	// A class's budget leaves room for the others: frames still pooled
	// after the chunks took theirs.
	p.classLimit = 2 << 20
	p.bytes, p.free = 0, map[int][]*[]byte{}
	for range 3 {
		p.Put(p.newBuffer(chunk))
	}
	p.Put(p.newBuffer(16 << 10))
	if n := len(p.free[class(chunk)]); n != 1 {
		t.Fatalf("the pool kept %d chunks of %d bytes; its class budget is %d", n, class(chunk), p.classLimit)
	}
	if len(p.free[16<<10]) != 1 {
		t.Fatal("a frame was not kept beside the chunks")
	}
	foreign := make([]byte, 1<<20+1)
	p.Put(&foreign) // not of a class: not kept
	for c := range p.free {
		for _, buf := range p.free[c] {
			if cap(*buf) != c {
				t.Fatalf("class %d holds a buffer of capacity %d", c, cap(*buf))
			}
		}
	}
}

// newBuffer allocates a fresh buffer of size's class (test helper).
func (p *bufferPool) newBuffer(size int) *[]byte {
	buf := make([]byte, size, class(size))
	return &buf
}
