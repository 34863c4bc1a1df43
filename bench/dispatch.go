package bench

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/master"
	"github.com/gtrain/gtrain/master/core"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Etcd is an embedded etcd for the benchmarks.
type Etcd struct {
	srv *etcdtest.Server
	Cli *clientv3.Client
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// StartEtcd starts a single-member etcd, configured as the agent's --dev
// one, in a temp dir.
func StartEtcd() (*Etcd, error) {
	srv, err := etcdtest.Launch()
	if err != nil {
		return nil, err
	}
	cli, err := coord.Dial(context.Background(), []string{srv.Endpoint}, nil)
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &Etcd{srv: srv, Cli: cli}, nil
}

// Close stops etcd and removes its data.
func (e *Etcd) Close() {
	e.Cli.Close()
	e.srv.Close()
}

func lead(ctx context.Context, cli *clientv3.Client, job string) (*coord.Leadership, error) {
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		return nil, err
	}
	return coord.Campaign(ctx, cli, s, coord.ElectionPrefix(job), "bench")
}

// SerialTxnPerSec is the ceiling for one trainer: fenced single-key
// transactions, one after the other.
func SerialTxnPerSec(e *Etcd, n int) (float64, error) {
	ctx := context.Background()
	l, err := lead(ctx, e.Cli, "txn-ceiling")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := l.Commit(ctx, clientv3.OpPut(fmt.Sprintf("/bench/txn/%d", i%1000), "v")); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// ParallelPutPerSec is the ceiling for 64 trainers: puts from `way` goroutines.
func ParallelPutPerSec(e *Etcd, n, way int) (float64, error) {
	ctx := context.Background()
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	start := time.Now()
	for w := 0; w < way; w++ {
		g.Go(func() error {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return nil
				}
				if _, err := e.Cli.Put(ctx, fmt.Sprintf("/bench/put/%d", i%1000), "v"); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

type noEval struct{}

func (noEval) EndPass(context.Context, int, int64) (api.Metrics, error) { return api.Metrics{}, nil }

// DispatchPerSec measures tasks handed out and acknowledged per second by
// `trainers` concurrent trainers through the master's gRPC service, every
// change durable in etcd (fenced) before it is answered.
func DispatchPerSec(e *Etcd, job string, tasks, trainers int) (float64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := lead(ctx, e.Cli, job)
	if err != nil {
		return 0, err
	}
	ts := &core.TaskSet{ChunkRecords: map[int][]int{}}
	for i := 0; i < tasks; i++ {
		ts.Tasks = append(ts.Tasks, core.Task{ID: i, File: "f", FirstChunk: i, Chunks: 1, Records: 10})
		ts.ChunkRecords[i] = []int{10}
		ts.Records += 10
	}
	cfg := core.CoreConfig{Trainers: trainers, Batch: 10, Passes: 1, Queue: core.DefaultQueueConfig(), LongPoll: time.Second}
	core, err := master.NewDriver(ctx, cfg, ts, master.NewEtcdStore(e.Cli, l, job), noEval{}, master.SystemClock{}, nil)
	if err != nil {
		return 0, err
	}
	go core.Run(ctx)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := grpc.NewServer()
	api.RegisterMasterServer(srv, master.NewServer(core, nil, trainers))
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	mc := api.NewMasterClient(conn)
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for t := 0; t < trainers; t++ {
		g.Go(func() error {
			finished := int32(-1)
			for {
				r, err := mc.GetTask(gctx, &api.GetTaskRequest{TrainerId: int32(t), FinishedTask: finished, FailedTask: -1, Records: 10})
				if err != nil {
					return err
				}
				if finished >= 0 {
					done.Add(1)
				}
				if r.Status != api.WorkStatus_WORK_READY {
					return nil
				}
				finished = r.Task.Id
			}
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	elapsed := time.Since(start).Seconds()
	if n := done.Load(); n != int64(tasks) {
		return 0, fmt.Errorf("dispatch: %d tasks acknowledged, want %d", n, tasks)
	}
	return float64(tasks) / elapsed, nil
}
