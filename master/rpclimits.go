package master

import (
	"github.com/gtrain/gtrain/api"
	"google.golang.org/grpc"
)

// Limits of the Master gRPC server (README "Confined paths and limits").
// Every request a trainer sends is a few scalars and at most a short string
// (a worker name, a rollback reason); the large messages (a step's slices)
// go the other way.
const (
	// masterMaxRecv bounds one request at 64 KiB, a thousand times what a
	// trainer sends, instead of gRPC's 4 MiB default.
	masterMaxRecv = 64 << 10
	// masterMaxStreams bounds the concurrent calls of one connection: a
	// trainer has at most a long-polled GetTask or GetStep and a report in
	// flight.
	masterMaxStreams = 64
)

func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(masterMaxRecv), grpc.MaxConcurrentStreams(masterMaxStreams),
		grpc.InitialWindowSize(api.MasterWindow), grpc.InitialConnWindowSize(api.MasterWindow)}
}
