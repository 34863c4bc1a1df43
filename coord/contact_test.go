package coord

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestLostContact(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"cancelled", fmt.Errorf("stop: %w", context.Canceled), false},
		{"plain failure", errors.New("open /x: permission denied"), false},
		{"invalid argument", status.Error(codes.InvalidArgument, "bad"), false},
		{"session lost", fmt.Errorf("pserver 1: %w", ErrSessionLost), true},
		{"fenced", fmt.Errorf("commit: %w", ErrFenced), true},
		{"etcd timeout", fmt.Errorf("read job: %w", context.DeadlineExceeded), true},
		{"etcd no leader", fmt.Errorf("read job: %w", rpctypes.ErrNoLeader), true},
		{"etcd leader changed", rpctypes.ErrLeaderChanged, true},
		{"etcd auth", rpctypes.ErrPermissionDenied, false},
		{"master unavailable", fmt.Errorf("register: %w", status.Error(codes.Unavailable, "connection refused")), true},
	}
	for _, tt := range tests {
		if got := LostContact(tt.err); got != tt.want {
			t.Errorf("%s: LostContact(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
