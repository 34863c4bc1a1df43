package bench

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/pserver/client"
)

// SparseVocab is the id range of the sparse figures: 10 M ids, as the
// sparse issue's recommendation tables.
const SparseVocab = 10_000_000

// sparseDim is the rows' dimension (64 bytes of float32 values).
const sparseDim = 16

// sparseTableConfig is the table the sparse figures use: dimension 16,
// adagrad.
func sparseTableConfig() pserver.TableConfig {
	return pserver.TableConfig{Name: "items", Dim: sparseDim, Seed: 1,
		Optimizer: pserver.OptimizerConfig{Kind: pserver.OptimizerAdagrad, LearningRate: 0.05}.WithDefaults()}
}

func sparseTable() (*pserver.Table, error) { return pserver.NewTable(sparseTableConfig()) }

// zipfIDs draws n ids Zipf-like (s = 1.1) from [0, SparseVocab), scattered
// over the 64-bit range as hashed ids are, so popular ids are not neighbours.
func zipfIDs(r *rand.Rand, n int) []uint64 {
	z := rand.NewZipf(r, 1.1, 1, SparseVocab-1)
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = client.Mix64(z.Uint64())
	}
	return ids
}

// SparsePullPush is sparse_pull_push: rows per second that a pserver
// serves over gRPC on loopback (its real server, in this process, async
// mode: 1 pserver) pulled and then pushed back with adagrad, batches of
// 4,096 Zipf-like ids; and its ceiling, random 64-byte gathers from a table
// of SparseVocab rows in memory.
type SparsePullPush struct {
	RowsPerSec, GathersPerSec float64
	Stored                    int
}

// MeasureSparsePullPush runs for about d on each side.
func MeasureSparsePullPush(d time.Duration) (*SparsePullPush, error) {
	shard, err := pserver.NewShard(pserver.ShardConfig{Mode: jobspec.ModeAsync, Optimizer: sparseTableConfig().Optimizer,
		Tables: []pserver.TableConfig{sparseTableConfig()}}, nil)
	if err != nil {
		return nil, err
	}
	addr, stop, err := serveShard(0, shard)
	if err != nil {
		return nil, err
	}
	defer stop()
	c, err := client.NewClient([]string{addr}, nil, jobauth.Dial{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	r := rand.New(rand.NewSource(1))
	const batch = 4096
	batches := make([][]uint64, 64)
	for i := range batches {
		batches[i] = zipfIDs(r, batch)
	}
	vals, grads := make([]float32, batch*sparseDim), make([]float32, batch*sparseDim)
	for i := range grads {
		grads[i] = float32(i%7) * 0.01
	}
	ctx, name := context.Background(), sparseTableConfig().Name
	rows := 0
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		ids := batches[i%len(batches)]
		if err := c.PullRows(ctx, name, ids, sparseDim, 0, 0, vals); err != nil {
			return nil, err
		}
		if err := c.PushRows(ctx, 0, 0, 0, batch, name, ids, sparseDim, grads); err != nil {
			return nil, err
		}
		rows += batch
	}
	rate := float64(rows) / time.Since(start).Seconds()
	return &SparsePullPush{RowsPerSec: rate, GathersPerSec: gatherRate(d), Stored: shard.TableRows(name)}, nil
}

// gatherRate is the ceiling: 64-byte rows copied from random places of a
// SparseVocab-row array (640 MB), per second.
func gatherRate(d time.Duration) float64 {
	table := make([]float32, SparseVocab*sparseDim)
	for i := 0; i < len(table); i += 1024 {
		table[i] = 1 // touch every page
	}
	dst := make([]float32, sparseDim)
	x, n := uint64(1), 0
	start := time.Now()
	for time.Since(start) < d {
		for range 4096 {
			x = client.Mix64(x + 0x9e3779b97f4a7c15)
			row := int(x % SparseVocab)
			copy(dst, table[row*sparseDim:(row+1)*sparseDim])
		}
		n += 4096
	}
	_ = dst[0]
	return float64(n) / time.Since(start).Seconds()
}

// SparseMemoryChild is the environment variable that makes the bench
// binary the sparse_memory child: it fills a table and prints its VmHWM.
const SparseMemoryChild = "GTRAIN_BENCH_SPARSE_MEMORY_ROWS"

// SparseMemory is sparse_memory: the peak resident memory (VmHWM) of a
// process whose pserver table holds Rows touched rows of dimension 16
// with adagrad, and what the rows hold: values, adagrad's sums and the id.
type SparseMemory struct {
	Rows      int
	PeakBytes int64
	RowBytes  int64 // per row: 16 values + 16 sums (float32) + an 8-byte id
	Untouched int64 // VmHWM growth from declaring a 1 G-row table and reading 1 M of its rows
}

// MeasureSparseMemory runs this binary again as the child (a fresh process,
// so the peak is the table's) with rows rows.
func MeasureSparseMemory(rows int) (*SparseMemory, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", SparseMemoryChild, rows))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sparse_memory child: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return nil, fmt.Errorf("sparse_memory child said %q, want two numbers", out)
	}
	peak, err1 := strconv.ParseInt(f[0], 10, 64)
	untouched, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("sparse_memory child said %q", out)
	}
	return &SparseMemory{Rows: rows, PeakBytes: peak, RowBytes: 2*sparseDim*4 + 8, Untouched: untouched}, nil
}

// RunSparseMemoryChild is the child's work, with a pserver's collector: it
// declares a table of 1 G rows and reads 1 M of them (which must cost
// nothing), then updates rows distinct rows of another table, and prints
// both VmHWM figures.
func RunSparseMemoryChild(rows int) error {
	pserver.TuneCollector()
	base, err := vmHWM(os.Getpid())
	if err != nil {
		return err
	}
	huge, err := pserver.NewTable(pserver.TableConfig{Name: "declared", Dim: sparseDim, Vocab: 1 << 30, Seed: 1,
		Optimizer: pserver.OptimizerConfig{Kind: pserver.OptimizerAdagrad, LearningRate: 0.05}.WithDefaults()})
	if err != nil {
		return err
	}
	ids, vals := make([]uint64, 1024), make([]float32, 1024*sparseDim)
	for b := range 1024 {
		for i := range ids {
			ids[i] = uint64(b*1024+i) * 1021 % (1 << 30)
		}
		if err := huge.Pull(ids, vals); err != nil {
			return err
		}
	}
	afterUntouched, err := vmHWM(os.Getpid())
	if err != nil {
		return err
	}
	tab, err := sparseTable()
	if err != nil {
		return err
	}
	grads := make([]float32, len(vals))
	for lo := 0; lo < rows; lo += len(ids) {
		n := min(len(ids), rows-lo)
		for i := range n {
			ids[i] = client.Mix64(uint64(lo + i))
		}
		if err := tab.Apply([]pserver.RowGrads{{IDs: ids[:n], Grad: grads[:n*sparseDim]}}, 1); err != nil {
			return err
		}
	}
	if tab.Rows() != rows {
		return fmt.Errorf("stored %d rows, want %d", tab.Rows(), rows)
	}
	peak, err := vmHWM(os.Getpid())
	if err != nil {
		return err
	}
	_, err = fmt.Println(peak, afterUntouched-base)
	return err
}
