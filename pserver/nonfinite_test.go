package pserver

import (
	"context"
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/pserver/client"
)

// A push holding a NaN or an infinity, or over a negative record count, is
// refused with InvalidArgument over real gRPC (Push and PushPull), the
// shard untouched; client.IsNonFinite tells the non-finite one. A push of
// no records (a sync step's empty micro-batch) is still taken.
func TestPushRefusesNonFiniteAndNegativeRecords(t *testing.T) {
	s, c := servePushPull(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		bad       float32
		records   int64
		nonFinite bool
	}{
		{"NaN", float32(math.NaN()), 1, true},
		{"+Inf", float32(math.Inf(1)), 1, true},
		{"-Inf", float32(math.Inf(-1)), 1, true},
		{"negative records", 1, -1, false},
	} {
		grads, params := pushPullBuffers(1)
		grads[1][2] = tc.bad
		err := c.Push(ctx, 0, 0, 0, tc.records, false, grads)
		if status.Code(err) != codes.InvalidArgument || client.IsNonFinite(err) != tc.nonFinite {
			t.Errorf("Push with %s: %v; want InvalidArgument, non-finite %v", tc.name, err, tc.nonFinite)
		}
		_, err = c.PushPull(ctx, 0, 0, 0, tc.records, false, grads, params, func() {})
		if status.Code(err) != codes.InvalidArgument || client.IsNonFinite(err) != tc.nonFinite {
			t.Errorf("PushPull with %s: %v; want InvalidArgument, non-finite %v", tc.name, err, tc.nonFinite)
		}
	}
	if s.Step() != 0 || s.gather.next != 0 || len(s.gather.pending) != 0 {
		t.Fatalf("refused pushes reached the shard: step %d, gathered %d, pending %d", s.Step(), s.gather.next, len(s.gather.pending))
	}
	grads, _ := pushPullBuffers(0)
	for mb := range 2 {
		if err := c.Push(ctx, mb, 0, 0, 0, false, grads); err != nil {
			t.Fatalf("push of an empty micro-batch %d: %v", mb, err)
		}
	}
	if s.Step() != 1 {
		t.Errorf("a step of empty micro-batches: shard at step %d, want 1", s.Step())
	}
}
