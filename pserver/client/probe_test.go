package client

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobauth"
	"google.golang.org/grpc"
)

type infoServer struct {
	api.UnimplementedPServerServer
	block chan struct{} // nil: answer at once
}

func (s *infoServer) Info(ctx context.Context, _ *api.InfoRequest) (*api.InfoReply, error) {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			// A hung pserver never answers: its gRPC deadline (the
			// client's, sent along) ends the call, never a reply that a
			// loaded machine could deliver before the client's own timer.
			return nil, ctx.Err()
		}
	}
	return &api.InfoReply{}, nil
}

func serveInfo(t *testing.T, srv *infoServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	api.RegisterPServerServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// Probe tells a pserver that answers from one that takes the call and does
// not answer (hung) and from one that is gone (dead, not hung).
func TestProbe(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	answering := serveInfo(t, &infoServer{})
	silent := serveInfo(t, &infoServer{block: block})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := lis.Addr().String()
	_ = lis.Close()
	c, err := NewClient([]string{answering, silent, gone}, nil, jobauth.Dial{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	got := c.Probe(context.Background(), 500*time.Millisecond)
	if want := []Health{Answered, Silent, Unreachable}; !slices.Equal(got, want) {
		t.Errorf("Probe = %v, want %v", got, want)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Probe took %s with a 500ms timeout", d)
	}
}
