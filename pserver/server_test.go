package pserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
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

// A restore refused because the checkpoint file of the step cannot be
// loaded (here: no longer the file its record names) reaches the master as
// client.ErrCheckpointUnusable, which makes it fall back to an older step;
// any other failure does not.
func TestRestoreOfAnUnusableCheckpointIsDataLoss(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	restore := func(ctx context.Context, step, epoch int64) error {
		if step == 20 {
			return fmt.Errorf("checkpoint of step %d: %w", step, checkpoint.ErrNotRecorded)
		}
		return errors.New("etcd unreachable")
	}
	c := serveShard(t, s, restore)
	err := c.Restore(t.Context(), 20, 1, 1)
	if !errors.Is(err, client.ErrCheckpointUnusable) || !strings.Contains(err.Error(), "does not match its record") {
		t.Fatalf("Restore = %v, want ErrCheckpointUnusable naming why", err)
	}
	if err := c.Restore(t.Context(), 10, 2, 2); err == nil || errors.Is(err, client.ErrCheckpointUnusable) {
		t.Fatalf("Restore = %v, want an error that is not ErrCheckpointUnusable", err)
	}
}

// A Restore's term is checked against the job's current master: a claimed
// term that is not the leader's (a huge one included) is refused and does
// not lock out the leader's own restores; a term that cannot be checked is
// Unavailable, and nothing is restored either way.
func TestRestoreChecksTheLeadersTerm(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	restored := 0
	restore := func(context.Context, int64, int64) error { restored++; return nil }
	var leaderErr error
	leader := func(context.Context) (int64, error) { return 7, leaderErr }
	c := serveServer(t, NewServer(0, s, restore, nil).CheckTerm(leader), s.Blocks())
	for _, term := range []int64{1 << 40, 6} {
		if err := c.Restore(t.Context(), 0, 1, term); status.Code(err) != codes.PermissionDenied {
			t.Errorf("Restore in term %d, leader in 7: %v, want PermissionDenied", term, err)
		}
	}
	if err := c.Restore(t.Context(), 0, 1, 7); err != nil || restored != 1 {
		t.Errorf("Restore in the leader's term 7: %v, %d restores; want it done once", err, restored)
	}
	leaderErr = errors.New("etcd unreachable")
	if err := c.Restore(t.Context(), 0, 2, 7); status.Code(err) != codes.Unavailable || restored != 1 {
		t.Errorf("Restore with the term unreadable: %v, %d restores; want Unavailable, none", err, restored)
	}
}
