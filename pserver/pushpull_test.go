package pserver

import (
	"context"
	"errors"
	"net"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// servePushPull serves a sync shard of two micro-batches over real gRPC on
// loopback and returns a client of it.
func servePushPull(t *testing.T) (*Shard, *client.Client) {
	t.Helper()
	s := testShard(t, jobspec.ModeSync, 2, "sgd")
	return s, serveShard(t, s, nil)
}

// serveShard serves s (restoring with restore) over real gRPC on loopback
// and returns a client of it.
func serveShard(t *testing.T, s *Shard, restore RestoreFunc) *client.Client {
	t.Helper()
	return serveServer(t, NewServer(0, s, restore, nil), s.Blocks())
}

// serveServer serves srv (holding blocks) over real gRPC on loopback and
// returns a client of it.
func serveServer(t *testing.T, server *Server, blocks []client.Block) *client.Client {
	t.Helper()
	return clientOf(t, []string{serveAt(t, server)}, blocks)
}

// serveAt serves srv over real gRPC on loopback and returns its address.
func serveAt(t *testing.T, server *Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(wire.ServerOptions()...)
	api.RegisterPServerServer(srv, server)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// clientOf is a client of the pservers at addrs, cutting blocks.
func clientOf(t *testing.T, addrs []string, blocks []client.Block) *client.Client {
	t.Helper()
	c, err := client.NewClient(addrs, blocks, jobauth.Dial{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func pushPullBuffers(fill float32) (grads, params [][]float32) {
	grads = [][]float32{slices.Repeat([]float32{fill}, 5), slices.Repeat([]float32{fill}, 3)}
	return grads, [][]float32{make([]float32, 5), make([]float32, 3)}
}

type pushPullResult struct {
	pulled client.Pulled
	err    error
}

// TestPushPullBringsTheNextStep: the first micro-batch's push is
// acknowledged at once but answers the parameters only when the second one
// completes the step; both get the parameters of step 1, as a pull would.
func TestPushPullBringsTheNextStep(t *testing.T) {
	_, c := servePushPull(t)
	ctx := context.Background()
	grads0, params0 := pushPullBuffers(1)
	acked := make(chan struct{})
	first := make(chan pushPullResult, 1)
	go func() {
		p, err := c.PushPull(ctx, 0, 0, 0, 1, false, grads0, params0, func() { close(acked) })
		first <- pushPullResult{p, err}
	}()
	select {
	case <-acked:
	case <-time.After(5 * time.Second):
		t.Fatal("the push of micro-batch 0 was not acknowledged")
	}
	select {
	case r := <-first:
		t.Fatalf("the push of micro-batch 0 answered before the step was complete: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	grads1, params1 := pushPullBuffers(2)
	p1, err := c.PushPull(ctx, 1, 0, 0, 1, false, grads1, params1, nil)
	if err != nil || !p1.All || p1.Lowest != 1 || p1.Highest != 1 {
		t.Fatalf("micro-batch 1: %+v %v, want all parameters of step 1", p1, err)
	}
	r := <-first
	if r.err != nil || !r.pulled.All || r.pulled.Lowest != 1 {
		t.Fatalf("micro-batch 0: %+v %v, want all parameters of step 1", r.pulled, r.err)
	}
	pulled := [][]float32{make([]float32, 5), make([]float32, 3)}
	if _, _, err := c.Pull(ctx, 1, 0, pulled); err != nil {
		t.Fatal(err)
	}
	for j := range pulled {
		if !slices.Equal(params0[j], pulled[j]) || !slices.Equal(params1[j], pulled[j]) {
			t.Fatalf("param %d: push-pulled %v and %v, pulled %v", j, params0[j], params1[j], pulled[j])
		}
	}
}

// TestPushPullIncompleteStepEndsWithoutParameters: with the other
// micro-batch missing, the push is applied and the call ends after its wait
// without parameters; a repeat of a pushed step is neither acknowledged nor
// an error; a push of a future step is refused.
func TestPushPullIncompleteStepEndsWithoutParameters(t *testing.T) {
	s, c := servePushPull(t)
	ctx := context.Background()
	grads, params := pushPullBuffers(1)
	var acks atomic.Int32
	start := time.Now()
	p, err := c.PushPull(ctx, 0, 0, 0, 1, false, grads, params, func() { acks.Add(1) })
	if err != nil || p.All || acks.Load() != 1 {
		t.Fatalf("lone micro-batch: %+v %v acks %d, want no parameters, no error, one ack", p, err, acks.Load())
	}
	if waited := time.Since(start); waited < pushPullWait {
		t.Fatalf("answered after %v, before the wait of %v", waited, pushPullWait)
	}
	if _, err := c.PushPull(ctx, 1, 0, 0, 1, false, grads, params, nil); err != nil {
		t.Fatal(err)
	}
	if s.Step() != 1 {
		t.Fatalf("shard at step %d, want 1", s.Step())
	}
	p, err = c.PushPull(ctx, 0, 0, 0, 1, false, grads, params, func() { acks.Add(1) })
	if err != nil || p.All || acks.Load() != 1 {
		t.Fatalf("repeated push of an applied step: %+v %v acks %d, want nothing", p, err, acks.Load())
	}
	_, err = c.PushPull(ctx, 0, 5, 0, 1, false, grads, params, nil)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("push of a future step: %v, want FailedPrecondition", err)
	}
}

// TestPushWaitsForEachGradient: a push told to wait for each parameter's
// gradient (client.WaitForGradient, the trainer's overlap of push and
// backward pass) sends nothing of a parameter before it is final, and the
// step it completes applies the same values as a push of finished
// gradients.
func TestPushWaitsForEachGradient(t *testing.T) {
	ctx := context.Background()
	_, gated := servePushPull(t)
	_, plain := servePushPull(t)
	final, _ := pushPullBuffers(3)
	grads, _ := pushPullBuffers(99) // garbage until "computed"
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var asked atomic.Int32
	// A piece is final once its parameter was released (each parameter
	// is one piece here).
	wait := func(ctx context.Context, pieces []client.GradientPiece) (int, error) {
		asked.Add(1)
		cases := make([]reflect.SelectCase, 0, len(pieces)+1)
		for _, p := range pieces {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(release[p.Param])})
		}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		k, _, _ := reflect.Select(cases)
		if k == len(pieces) {
			return 0, ctx.Err()
		}
		return k, nil
	}
	done := make(chan error, 1)
	go func() { done <- gated.Push(ctx, 0, 0, 0, 1, false, grads, client.WaitForGradient(wait)) }()
	// The second parameter first: whichever is final first goes first.
	for _, j := range []int{1, 0} {
		time.Sleep(20 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("the push ended (%v) before parameter %d's gradient was final", err, j)
		default:
		}
		copy(grads[j], final[j])
		close(release[j])
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if asked.Load() == 0 {
		t.Fatal("the push never waited for a gradient")
	}
	if err := plain.Push(ctx, 0, 0, 0, 1, false, final); err != nil {
		t.Fatal(err)
	}
	other, _ := pushPullBuffers(1)
	for _, c := range []*client.Client{gated, plain} {
		if err := c.Push(ctx, 1, 0, 0, 1, false, other); err != nil {
			t.Fatal(err)
		}
	}
	_, got := pushPullBuffers(0)
	_, want := pushPullBuffers(0)
	if _, _, err := gated.Pull(ctx, 1, 0, got); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.Pull(ctx, 1, 0, want); err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if !slices.Equal(got[j], want[j]) {
			t.Fatalf("param %d after the gated push %v; after a plain push %v", j, got[j], want[j])
		}
	}
}

// TestPushWaitErrorEndsThePush: when the gradient cannot be computed, the
// push ends with that error and the step is not applied.
func TestPushWaitErrorEndsThePush(t *testing.T) {
	s, c := servePushPull(t)
	grads, _ := pushPullBuffers(1)
	failed := errors.New("bad records")
	err := c.Push(context.Background(), 0, 0, 0, 1, false, grads, client.WaitForGradient(func(context.Context, []client.GradientPiece) (int, error) { return 0, failed }))
	if !errors.Is(err, failed) {
		t.Fatalf("push error %v; want the gradient's %v", err, failed)
	}
	if step := s.Step(); step != 0 {
		t.Fatalf("shard at step %d after a failed push; want 0", step)
	}
}

// TestPushPullWaitsBeforeWritingParams: a PushPull told to wait before the
// pull (client.WaitBeforePull: the trainer's backward pass still reads the
// parameters) writes nothing into params until the wait returns, then
// brings the next step's parameters as usual.
func TestPushPullWaitsBeforeWritingParams(t *testing.T) {
	ctx := context.Background()
	_, c := servePushPull(t)
	other, _ := pushPullBuffers(2)
	if err := c.Push(ctx, 1, 0, 0, 1, false, other); err != nil {
		t.Fatal(err)
	}
	grads, params := pushPullBuffers(1)
	for _, p := range params {
		for k := range p {
			p[k] = -7 // what the backward pass is reading
		}
	}
	release, acked := make(chan struct{}), make(chan struct{})
	free := func(ctx context.Context, _ []int) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	done := make(chan pushPullResult, 1)
	go func() {
		p, err := c.PushPull(ctx, 0, 0, 0, 1, false, grads, params, func() { close(acked) }, client.WaitBeforePull(free))
		done <- pushPullResult{p, err}
	}()
	<-acked
	time.Sleep(50 * time.Millisecond) // the pserver applied the step and sends
	for j, p := range params {
		for k, v := range p {
			if v != -7 {
				t.Fatalf("params[%d][%d] = %v written before the wait returned", j, k, v)
			}
		}
	}
	close(release)
	r := <-done
	if r.err != nil || !r.pulled.All || r.pulled.Lowest != 1 {
		t.Fatalf("PushPull: %+v %v; want all parameters of step 1", r.pulled, r.err)
	}
	if params[0][0] == -7 {
		t.Fatal("the parameters of step 1 never came after the wait")
	}
}
