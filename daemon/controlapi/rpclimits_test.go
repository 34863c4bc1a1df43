package controlapi

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
)

// The Control API refuses a request over controlMaxRecv before decoding it.
// The server runs with the options an agent gives it; the requests never
// get as far as etcd (the spec is refused first), so there is none.
func TestControlAPIMessageLimit(t *testing.T) {
	t.Parallel()
	ctl, err := New(nil, Config{NodeName: "node-limits", DataDir: t.TempDir(), AllowAnonymous: true, Log: logcheck.Logger(t, nil)}, nil, nil, clock.System{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(ctl.ServerOptions()...)
	api.RegisterControlServer(srv, ctl)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := api.NewControlClient(conn)

	big := bytes.Repeat([]byte(" "), controlMaxRecv+1)
	_, err = client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: big})
	wantStatus(t, "oversized request", err, codes.ResourceExhausted, "larger than max")
	_, err = client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: big[:controlMaxRecv/2]})
	wantStatus(t, "a request under the limit reaches the handler", err, codes.InvalidArgument, "spec_json")
}

func wantStatus(t *testing.T, what string, err error, code codes.Code, contains string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), contains) {
		t.Errorf("%s: error %v, want code %s and a message with %q", what, err, code, contains)
	}
}
