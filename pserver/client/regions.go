package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gtrain/gtrain/pserver/region"
	"github.com/gtrain/gtrain/pserver/wire"
)

// regionSlot is the shared-memory region (pserver/region) a PushPull to a
// pserver of this host moves its tensors through instead of the socket.
type regionSlot struct {
	mu      sync.Mutex // held by the PushPull using it
	path    string     // the pserver's socket for regions
	r       *region.Region
	att     *region.Attachment
	offsets map[int]int // each block's place in the halves
	retry   time.Time   // after a refused attach: the socket until then
}

// regionRetry is how long pushes to a pserver go through the socket after
// it refused a region (or had no socket for one: an older pserver).
const regionRetry = 10 * time.Second

// newRegionSlots gives each pserver reached through a local socket a slot.
func newRegionSlots(targets []Target) []*regionSlot {
	slots := make([]*regionSlot, len(targets))
	for i, t := range targets {
		if t.Socket != "" {
			slots[i] = &regionSlot{path: region.SocketPath(t.Socket)}
		}
	}
	return slots
}

// regionFor returns pserver i's region, attached first if need be, held
// until finish; nil when this push goes through the socket (no local
// socket, a refused region, or another push using it).
func (c *Client) regionFor(ctx context.Context, i int) *regionSlot {
	if i >= len(c.regions) || c.regions[i] == nil || !c.regions[i].mu.TryLock() {
		return nil
	}
	s := c.regions[i]
	if s.r != nil && s.att.Lost() {
		s.drop() // the pserver dropped it (it restarted): attach another
	}
	if s.r == nil && (time.Now().Before(s.retry) || !s.attach(ctx, BlocksOf(c.blocks, i))) {
		s.mu.Unlock()
		return nil
	}
	return s
}

// attach creates a region for blocks and hands it to the pserver.
func (s *regionSlot) attach(ctx context.Context, blocks []Block) bool {
	offsets, floats := RegionOffsets(blocks)
	if floats == 0 {
		s.retry = time.Now().Add(regionRetry)
		return false
	}
	r, f, err := region.Create(floats)
	var att *region.Attachment
	if err == nil {
		att, err = region.Attach(ctx, s.path, r, f)
		f.Close()
		if err != nil {
			r.Close()
		}
	}
	if err != nil {
		if ctx.Err() == nil { // a push given up on says nothing of the pserver
			s.retry = time.Now().Add(regionRetry)
		}
		return false
	}
	s.r, s.att, s.offsets = r, att, offsets
	return true
}

// finish gives the slot back. A region whose stream ended before the
// pserver acknowledged the push (reusable false) is dropped, and the next
// push attaches another: the pserver's handler of that stream may still be
// reading its gradient half. After the acknowledgement it reads it no
// more, and it writes the parameter half only under the region's lock,
// which the next stream's handler takes before it writes there too.
func (s *regionSlot) finish(reusable bool) {
	if !reusable {
		s.drop()
	}
	s.mu.Unlock()
}

// drop gives the region up: unmapped here, dropped by the pserver.
func (s *regionSlot) drop() {
	if s.r != nil {
		s.att.Close()
		s.r.Close()
		s.r, s.att = nil, nil
	}
}

// closeRegions drops every region (Client.Close).
func (c *Client) closeRegions() {
	for _, s := range c.regions {
		if s != nil {
			s.mu.Lock()
			s.drop()
			s.mu.Unlock()
		}
	}
}

// put copies src, floats [off, end) of block b's gradient, into the region.
func (s *regionSlot) put(b Block, off int, src []float32) {
	at := s.offsets[b.ID] + off
	copy(s.r.Grads()[at:at+len(src)], src)
}

// take copies n floats of block b's parameters at float offset off out of
// the region into dst.
func (s *regionSlot) take(b Block, off int64, n int64, dst []float32) error {
	at, ok := s.offsets[b.ID]
	if !ok || off < 0 || n < 0 || off > int64(len(dst)) || n > int64(len(dst))-off || at+int(off+n) > s.r.Floats {
		return fmt.Errorf("%w: block %d: %d floats at %d in the region", wire.ErrMalformed, b.ID, n, off)
	}
	src := s.r.Params()[at+int(off):]
	copy(dst[off:off+n], src[:n])
	return nil
}
