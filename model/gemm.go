package model

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// sgemm is the one BLAS routine the models use: C = alpha·op(A)·op(B) +
// beta·C in float32, row-major. Builds with cgo and the openblas tag use
// OpenBLAS (gemm_openblas.go); others gonum's pure-Go kernels
// (gemm_purego.go). Both are gonum's blas.Float32Level3 signature.
type sgemm interface {
	Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// tile is the fixed block of the output that one BLAS call computes. A
// product is cut into tiles of at most tile×tile outputs (a weight
// gradient into bands of whole rows: bands), whatever the number of
// threads, and threads share out whole pieces. The cut is along
// the output's rows and columns only, never along the summed dimension, so
// every output value is computed by the same call on the same inputs with
// the same summation order however many threads run: a micro-batch's
// gradient is bit-identical for cpu 1, 2 or 16. 256 keeps OpenBLAS at its
// full speed (a 256-column band re-packs the left matrix once per band,
// about 5% of the multiply at K=784: measured 100 GFLOP/s banded against
// 98 whole).
const tile = 256

// cut is the shape of the pieces a product is cut into: at most rows×cols
// outputs each, fixed by the product's shape alone.
type cut struct{ rows, cols int }

// bands cuts a weight gradient (inᵀ·delta, summed over the micro-batch's
// records) into bands of whole rows, ⌈m/tile⌉ of them, of equal height
// rounded up to a multiple of 8 (each band then starts a multiple of 32
// bytes into the rows of its inputs; the last band is no taller). Its
// summed dimension is short, so re-packing both operands for every
// tile×tile piece costs a tenth of the product: one thread computed the
// MLP 784-1024-1024-10's gradient of 256 records in 27.5 ms with bands
// against 28.0 with tiles, two threads in 14.6 against 15.1 (2-core Zen 4,
// Cooperlake kernels, alternated runs, 2026-11-29). Equal heights keep the bands of 784 rows, 200+200+200+184,
// shared evenly by two threads (256+256+256+16 would leave one thread two
// full bands to compute while the other has one). The price: a weight
// gradient has ⌈m/tile⌉ pieces where it had 16, so threads beyond those
// wait while it computes (as they do in a forward product of 256 records,
// whose pieces are its ⌈n/tile⌉ column tiles); and a push piece of 256Ki
// floats (wire.ChunkFloats, 256 rows of a 1024-wide weight) is final only
// with the band that ends past it, not with a band ending on it.
func bands(m, n int) cut {
	// At least 8 rows and 1 column, so that an empty product (m or n 0)
	// divides by neither when compute counts its pieces.
	count := max(1, ceilDiv(m, tile))
	return cut{rows: max(8, ceilDiv(ceilDiv(m, count), 8)*8), cols: max(1, n)}
}

// product is one C = op(A)·op(B) + beta·C to cut into pieces (cut).
type product struct {
	tA, tB          blas.Transpose
	m, n, k         int
	a               []float32
	lda             int
	b               []float32
	ldb             int
	beta            float32
	c               []float32
	ldc             int
	cut             cut
	colTiles, tiles int // the tile grid's width, and its size
	impl            sgemm
	rows            rowsFinal // told as C's first rows become final
}

// rowsFinal tells a Progress that the first rows of a product's C are
// final: C is a gradient stored row-major with width floats a row, so its
// first rows·width floats are (Progress.Partial). The zero value tells
// nothing.
type rowsFinal struct {
	p     *Progress
	param int
	width int
}

func (r rowsFinal) done(rows int) {
	if r.p != nil && r.p.Partial != nil {
		r.p.Partial(r.param, rows*r.width)
	}
}

// run computes piece t (row-major over the grid of pieces).
func (p *product) run(t int) {
	r0, c0 := (t/p.colTiles)*p.cut.rows, (t%p.colTiles)*p.cut.cols
	rows, cols := min(p.cut.rows, p.m-r0), min(p.cut.cols, p.n-c0)
	a := p.a[rowOffset(p.tA, r0, p.lda):]
	b := p.b[colOffset(p.tB, c0, p.ldb):]
	p.impl.Sgemm(p.tA, p.tB, rows, cols, p.k, 1, a, p.lda, b, p.ldb, p.beta, p.c[r0*p.ldc+c0:], p.ldc)
}

// rowOffset is where row r of op(A) starts in A's storage.
func rowOffset(t blas.Transpose, r, ld int) int {
	if t == blas.NoTrans {
		return r * ld
	}
	return r
}

// colOffset is where column c of op(B) starts in B's storage.
func colOffset(t blas.Transpose, c, ld int) int {
	if t == blas.NoTrans {
		return c
	}
	return c * ld
}

// threads computes products on a fixed number of goroutines (each cgo call
// holds its own OS thread, so n goroutines are n BLAS threads whatever
// GOMAXPROCS is).
type threads struct {
	n    int
	impl sgemm
	pin  func() (unpin func()) // Options.Pin
}

// mul computes C = op(A)·op(B) + beta·C, with op(A) m×k and op(B) k×n.
func (th threads) mul(tA, tB blas.Transpose, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	th.compute(product{tA: tA, tB: tB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
		cut: cut{tile, tile}})
}

// mulRows computes a weight gradient, cut into bands of whole rows
// (bands), telling rows each time a band is final (in order, the last time
// with m), so that a push can send a gradient's first
// rows while the last ones compute: a gradient's tail, not all of it, is
// then left to send once the backward pass ends.
func (th threads) mulRows(tA, tB blas.Transpose, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, rows rowsFinal) {
	th.compute(product{tA: tA, tB: tB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
		cut: bands(m, n), rows: rows})
}

// compute runs p's pieces, on this goroutine alone for one thread (no
// allocation), or shared out.
func (th threads) compute(p product) {
	rowTiles, colTiles := ceilDiv(p.m, p.cut.rows), ceilDiv(p.n, p.cut.cols)
	p.colTiles, p.tiles, p.impl = colTiles, rowTiles*colTiles, th.impl
	workers := min(th.count(), p.tiles)
	if workers <= 1 {
		for t := range p.tiles {
			p.run(t)
			if (t+1)%colTiles == 0 {
				p.rows.done(min((t/colTiles+1)*p.cut.rows, p.m))
			}
		}
		return
	}
	shared := new(product) // only here: the one-thread path allocates nothing
	*shared = p
	shared.share(workers, rowTiles, th.pin)
}

// share computes p's tiles on workers new goroutines while this one waits.
// Each takes the next tile not taken yet, in order, so a goroutine whose thread
// the kernel preempts (a pserver of the same host, the trainer's own
// network goroutines) holds back one tile, not a fixed share of them; which
// goroutine computes a tile does not change its value, only how the work
// is shared. Bands of rows are told final in order, by whichever goroutine
// completes the last one missing.
func (p *product) share(workers, rowTiles int, pin func() func()) {
	var mu sync.Mutex
	left := make([]int, rowTiles) // tiles of each band not computed yet
	for r := range left {
		left[r] = p.colTiles
	}
	next := 0 // the first band not told final
	run := func(t int) {
		p.run(t)
		if p.rows.p == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		left[t/p.colTiles]--
		from := next
		for next < rowTiles && left[next] == 0 {
			next++
		}
		if next > from {
			p.rows.done(min(next*p.cut.rows, p.m))
		}
	}
	var taken atomic.Int64
	work := func() {
		if pin != nil {
			defer pin()()
		}
		for t := int(taken.Add(1) - 1); t < p.tiles; t = int(taken.Add(1) - 1) {
			run(t)
		}
	}
	// This goroutine does not take tiles itself. Observed when it did, with
	// 2 threads: a 4-tile product (256×1024 outputs) sometimes ran at the
	// one-thread speed, its speed-up 1.0× in some runs against 1.4-1.6× now.
	// Our reading: the worker started last sits in the scheduler's next slot
	// of this goroutine's P, which other Ps take only on their last stealing
	// attempt, while the cgo call into the BLAS keeps the P until the
	// runtime takes it back (20 µs to 10 ms), so the worker ran late or after
	// this goroutine had taken every tile. Waiting hands the P to a worker at
	// once.
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
}

// count is the number of threads: n, or GOMAXPROCS when n is 0 (a role
// process sets GOMAXPROCS from its job's resources.<role>.cpu).
func (th threads) count() int {
	if th.n > 0 {
		return th.n
	}
	return runtime.GOMAXPROCS(0)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// pureGoGemm is gonum's pure-Go float32 GEMM: the kernels of builds without
// OpenBLAS, and the reference the fast ones are tested against.
var pureGoGemm sgemm = gonum.Implementation{}

// Multiply sets c = a·b (row-major, a m×k, b k×n) with this build's kernels
// in one call on one thread: what benchmarks measure the machine's GEMM
// rate with.
func Multiply(m, n, k int, a, b, c []float32) {
	fastGemm.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
}
