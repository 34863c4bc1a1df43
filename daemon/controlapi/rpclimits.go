package controlapi

import "google.golang.org/grpc"

// Limits of the Control API server (README "Confined paths and limits").
// Its largest request is a job spec, which jobspec's maxima keep to a few
// KiB (three paths of at most 4 KiB, at most 64 hidden layers); its replies
// are documents and log chunks, which the server sends, not receives.
const (
	// controlMaxRecv bounds one request: far above a valid spec, far below
	// gRPC's 4 MiB default, so a hostile client cannot make the agent buffer
	// megabytes per call.
	controlMaxRecv = 1 << 20
	// controlMaxStreams bounds the concurrent calls of one connection: a gctl
	// makes one at a time, an agent relaying `gctl job logs -f` one per
	// follower; 128 leaves room for many followers through one relay.
	controlMaxStreams = 128
)

// controlServerOptions are the limits every Control API server sets.
func controlServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(controlMaxRecv), grpc.MaxConcurrentStreams(controlMaxStreams)}
}
