// Package api holds gtrain's wire contracts: the protobuf services (agent
// Control API, Master, PServer) with their generated code, committed so that
// a build needs no protoc, and the JSON documents that gctl prints with -o
// json (docs/reference.md#job-status-json).
//
// It owns no behaviour beyond what its states mean (Terminal,
// WorkerState.Active). It must not import any other gtrain package.
//
// Regenerate after editing a .proto: `make proto` (needs protoc and the
// protoc-gen-go / protoc-gen-go-grpc plugins; see the Makefile).
package api
