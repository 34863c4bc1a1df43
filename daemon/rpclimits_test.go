package daemon

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
)

// The Control API refuses a request over controlMaxRecv before decoding it.
func TestControlAPIMessageLimit(t *testing.T) {
	t.Parallel()
	a := startAgent(t, testConfig(t, "node-limits", startEtcd(t)))
	big := bytes.Repeat([]byte(" "), controlMaxRecv+1)
	_, err := a.client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: big})
	assertStatus(t, "oversized request", err, codes.ResourceExhausted, "larger than max")
	_, err = a.client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: big[:controlMaxRecv/2]})
	assertStatus(t, "a request under the limit reaches the handler", err, codes.InvalidArgument, "spec_json")
}
