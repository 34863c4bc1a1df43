package pserver

import (
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
)

// The symbols below moved out of this package; they forward to their new
// homes only while master/, trainer/ and bench/ still import them from here.

// Block forwards to client.Block.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
type Block = client.Block

// Layout forwards to client.Layout.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
type Layout = client.Layout

// Client forwards to client.Client.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
type Client = client.Client

// Dynamic forwards to client.Dynamic.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
type Dynamic = client.Dynamic

// MaxBlockFloats forwards to client.MaxBlockFloats.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
const MaxBlockFloats = client.MaxBlockFloats

// NewLayout forwards to client.NewLayout.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
var NewLayout = client.NewLayout

// NewClient forwards to client.NewClient.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
var NewClient = client.NewClient

// NewDynamic forwards to client.NewDynamic.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
var NewDynamic = client.NewDynamic

// Partition forwards to client.Partition.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
var Partition = client.Partition

// BlocksOf forwards to client.BlocksOf.
//
// Deprecated: moved to pserver/client; removed once importers are updated.
var BlocksOf = client.BlocksOf

// ServerOptions forwards to wire.ServerOptions.
//
// Deprecated: moved to pserver/wire; removed once importers are updated.
var ServerOptions = wire.ServerOptions

// CheckpointDir forwards to jobdir.Checkpoints.
//
// Deprecated: moved to internal/jobdir (Checkpoints; the master's own
// directory is jobdir.MasterCheckpoints); removed once importers are updated.
func CheckpointDir(spec *jobspec.Spec, dataDir string) string {
	return jobdir.Checkpoints(dataDir, spec)
}
