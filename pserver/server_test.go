package pserver

import (
	"context"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestAwaitStep(t *testing.T) {
	pushStep0 := func(s *Shard) {
		g := grad(s, 0, 0, 1, func(int, int) float32 { return 1 })
		g.RollbackEpoch = 2
		if _, _, err := s.Push(g); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		req  *api.PullRequest
		// after the pull read the restore count
		meanwhile func(s *Shard)
		want      codes.Code
	}{
		{"step reached", &api.PullRequest{MinStep: 1, Epoch: 2}, pushStep0, codes.OK},
		{"step 0 at once", &api.PullRequest{MinStep: 0, Epoch: 2}, nil, codes.OK},
		{"restored meanwhile", &api.PullRequest{MinStep: 0, Epoch: 2}, func(s *Shard) { s.Rebase(2) }, codes.Aborted},
		{"rolled back past its epoch", &api.PullRequest{MinStep: 0, Epoch: 1}, nil, codes.Aborted},
		{"newer epoch than the shard's", &api.PullRequest{MinStep: 0, Epoch: 3}, nil, codes.OK},
		{"cancelled while waiting", &api.PullRequest{MinStep: 1, Epoch: 2}, nil, codes.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testShard(t, jobspec.ModeSync, 1, "sgd")
			s.Rebase(2)
			_, _, restores := s.Advanced()
			if tc.meanwhile != nil {
				tc.meanwhile(s)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a pull that has to wait ends at once
			err := NewServer(0, s, nil, nil).awaitStep(ctx, tc.req, restores)
			if got := status.Code(err); got != tc.want {
				t.Fatalf("awaitStep = %v, want %v", err, tc.want)
			}
		})
	}
}
