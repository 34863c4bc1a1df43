package wire

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/keepalive"

	"github.com/gtrain/gtrain/internal/jobauth"
)

// Keepalive finds a frozen or partitioned peer in seconds: a pull stream to
// a peer that stopped reading would otherwise hold the shard's read lock (and
// so every push) until TCP gives up, minutes later.
const (
	keepaliveTime    = 5 * time.Second
	keepaliveTimeout = 5 * time.Second
)

// Bulk tensors move in messages of ChunkFloats (1 MiB), well under the
// message limit; large flow-control windows keep a loopback or LAN link busy
// instead of waiting for window updates.
//
// maxMsg is also the server's receive limit (README "Confined paths and
// limits"): a push chunk is ChunkFloats floats (1 MiB) plus a few scalars,
// so 16 MiB leaves room without letting one message hold much more memory.
// maxStreams bounds the concurrent calls of one connection: a trainer or
// the master has one push, one pull and an Info or Restore in flight per
// pserver.
const (
	maxMsg     = 16 << 20
	window     = 16 << 20
	maxStreams = 64
)

// ServerOptions are the gRPC options of a pserver.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxMsg),
		grpc.MaxSendMsgSize(maxMsg),
		grpc.MaxConcurrentStreams(maxStreams),
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
		grpc.ReadBufferSize(1 << 20),
		grpc.WriteBufferSize(1 << 20),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveTime, PermitWithoutStream: true}),
		grpc.ForceServerCodecV2(Codec{}),
		experimental.BufferPool(sharedPool),
	}
}

// DialOptions are the gRPC options of a pserver client dialling with d
// (zero: plaintext, no job credential; mutual TLS with the node certificate
// and the job's credential for a role of the job).
func DialOptions(d jobauth.Dial) []grpc.DialOption {
	return append(d.Options(),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)),
		grpc.WithInitialWindowSize(window),
		grpc.WithInitialConnWindowSize(window),
		grpc.WithReadBufferSize(1<<20),
		grpc.WithWriteBufferSize(1<<20),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}),
		experimental.WithBufferPool(sharedPool),
	)
}

// ChunkFloats bounds one bulk message's payload (1 MiB, the fastest measured
// on loopback between 512 KiB and 4 MiB): large enough to amortise
// per-message cost, well under gRPC's message limits.
const ChunkFloats = 256 << 10
