package pserver

// gradientPool keeps a few gradient buffers for reuse. Not a sync.Pool: that
// one empties at every second collection, and a pserver collects often (see
// gcPercent), so each push would allocate a whole shard's gradient again and
// the garbage would grow resident memory by as much.
type gradientPool struct{ spare chan *Gradient }

// gradientsKept bounds the buffers kept: one being received while another
// waits to be applied covers a trainer; more pushes at once allocate.
const gradientsKept = 2

func newGradientPool() gradientPool { return gradientPool{spare: make(chan *Gradient, gradientsKept)} }

// Get returns a kept buffer, or nil when none is.
func (p gradientPool) Get() *Gradient {
	select {
	case g := <-p.spare:
		return g
	default:
		return nil
	}
}

// Put keeps g for reuse, or leaves it to the collector when enough are kept.
func (p gradientPool) Put(g *Gradient) {
	select {
	case p.spare <- g:
	default:
	}
}
