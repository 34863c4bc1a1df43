package pserver

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Bulk tensors move in 2 MiB messages; large flow-control windows keep a
// loopback or LAN link busy instead of waiting for window updates.
const (
	maxMsg = 16 << 20
	window = 16 << 20
)

// ServerOptions are the gRPC options of a pserver.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxMsg),
		grpc.MaxSendMsgSize(maxMsg),
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
		grpc.ReadBufferSize(1 << 20),
		grpc.WriteBufferSize(1 << 20),
	}
}

// DialOptions are the gRPC options of a pserver client.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)),
		grpc.WithInitialWindowSize(window),
		grpc.WithInitialConnWindowSize(window),
		grpc.WithReadBufferSize(1 << 20),
		grpc.WithWriteBufferSize(1 << 20),
	}
}
