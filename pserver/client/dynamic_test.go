package client

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PeerGone: the codes of a server gone or moving, and no others (Aborted is
// a rollback, not a move).
func TestPeerGone(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unavailable, "connection refused"), true},
		{status.Error(codes.DeadlineExceeded, "slow"), true},
		{status.Error(codes.Unimplemented, "unknown service"), true},
		{status.Error(codes.Aborted, "rolled back"), false},
		{status.Error(codes.InvalidArgument, "bad"), false},
		{errors.New("plain"), false},
		{nil, false},
	} {
		if got := PeerGone(tc.err); got != tc.want {
			t.Errorf("PeerGone(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
