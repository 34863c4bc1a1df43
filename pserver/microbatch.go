package pserver

// gathering is a sync step's micro-batches on their way to one sum. The sum
// is built in micro-batch order whatever order the pushes arrive in: the
// first micro-batch is the sum's start (not +0 plus it, which could differ in
// the sign of a zero), each next one is added as soon as it and all before it
// are here. So the float sum is the same whether one trainer computed every
// micro-batch or eight computed them in any order, and the pserver keeps only
// the pushes that arrived ahead of their turn, not a step's worth of them.
type gathering struct {
	sum     *Gradient         // micro-batches [0, next) summed; nil before the first
	next    int               // the micro-batch to add next
	pending map[int]*Gradient // pushes ahead of next, by micro-batch
}

func newGathering() gathering { return gathering{pending: map[int]*Gradient{}} }

// add takes g (the step's micro-batch g.MicroBatch) and reports whether it
// was kept: a micro-batch already here or already summed is a repeat, and
// the first push of it wins (the repeat's values are the same when the
// trainers agree on the step's parameters, and the model must not depend on
// which copy came first).
func (ga *gathering) add(g *Gradient, free gradientPool) bool {
	if g.MicroBatch < ga.next || ga.pending[g.MicroBatch] != nil {
		free.Put(g)
		return false
	}
	ga.pending[g.MicroBatch] = g
	for {
		n := ga.pending[ga.next]
		if n == nil {
			return true
		}
		delete(ga.pending, ga.next)
		ga.next++
		if ga.sum == nil {
			ga.sum = n
			continue
		}
		for id, d := range ga.sum.data {
			addInto(d, n.data[id])
		}
		ga.sum.Records += n.Records
		ga.sum.Checkpoint = ga.sum.Checkpoint || n.Checkpoint
		ga.sum.addRows(n)
		free.Put(n)
	}
}

// changesValues reports whether adding g (of the step, not a repeat or
// not) completes a step of records, whose apply changes the shard's values:
// every micro-batch from next on is then here but g's.
func (ga *gathering) changesValues(g *Gradient, microBatches int) bool {
	if g.MicroBatch < ga.next || ga.pending[g.MicroBatch] != nil || len(ga.pending) != microBatches-ga.next-1 {
		return false
	}
	records := g.Records
	if ga.sum != nil {
		records += ga.sum.Records
	}
	for _, p := range ga.pending {
		records += p.Records
	}
	return records > 0
}

// reset drops everything gathered.
func (ga *gathering) reset(free gradientPool) {
	if ga.sum != nil {
		free.Put(ga.sum)
	}
	for mb, g := range ga.pending {
		delete(ga.pending, mb)
		free.Put(g)
	}
	ga.sum, ga.next = nil, 0
}

// gatherLocked adds a sync push to the step and applies the step once its
// every micro-batch is summed; it reports whether it applied one.
func (s *Shard) gatherLocked(g *Gradient) bool {
	s.gather.add(g, s.free)
	if s.gather.next < s.cfg.MicroBatches {
		return false
	}
	sum := s.gather.sum
	s.applyLocked([]*Gradient{sum})
	checkpoint := sum.Checkpoint
	s.gather.reset(s.free)
	s.tables.dropPending()
	if checkpoint {
		s.snapshotLocked()
	}
	return true
}
