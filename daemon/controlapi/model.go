package controlapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/model"
)

// modelChunk bounds the bytes of a model file one message carries.
const modelChunk = 1 << 20

// FetchModel streams one pass of the job's model: from this node's files
// when it keeps them, else from the first other agent that does (the
// model is on the node the master ran on, or on shared storage).
func (c *Server) FetchModel(req *api.FetchModelRequest, stream grpc.ServerStreamingServer[api.ModelChunk]) error {
	ctx := stream.Context()
	snap, err := c.readJob(ctx, req.GetName())
	if err != nil {
		return err
	}
	if req.GetPass() < 0 {
		return status.Errorf(codes.InvalidArgument, "pass %d: give a pass from 0", req.GetPass())
	}
	dir := filepath.Join(jobdir.Model(c.dataDir, &snap.Record.Spec), model.LatestLink)
	what := "the newest model"
	if !req.GetLatest() {
		dir = filepath.Join(filepath.Dir(dir), model.PassDirName(int(req.GetPass())))
		what = fmt.Sprintf("the model of pass %d", req.GetPass())
	}
	roots, err := rolecfg.JobRoots(c.allowed, c.dataDir, &snap.Record.Spec)
	if err != nil {
		return status.Errorf(codes.Internal, "job %s: its roots: %v", req.GetName(), err)
	}
	err = sendModel(stream, roots, dir, &snap.Record.Spec)
	if !errors.Is(err, fs.ErrNotExist) || req.GetLocal() {
		if errors.Is(err, fs.ErrNotExist) {
			return status.Errorf(codes.NotFound, "job %s: %s is not on node %s", req.GetName(), what, c.node)
		}
		return err
	}
	if err := c.relayModel(ctx, req, stream); !errors.Is(err, errNoHolder) {
		return err
	}
	return status.Errorf(codes.NotFound, "job %s: no agent keeps %s; a pass's model is written when the pass ends (see gctl job status %s)",
		req.GetName(), what, req.GetName())
}

// sendModel streams the pass directory dir: its manifest and the spec
// first, then every file the manifest lists (the parameters', then each
// embedding table's ids and rows), each opened beneath the job's
// roots (a model directory or file symlinked out of them is refused, not
// sent). A missing manifest is fs.ErrNotExist: the model is not here.
func sendModel(stream grpc.ServerStreamingServer[api.ModelChunk], roots confine.Roots, dir string, spec any) error {
	raw, err := roots.ReadFile(filepath.Join(dir, model.ManifestFile))
	if errors.Is(err, confine.ErrOutside) {
		return status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	if err != nil {
		return err
	}
	var man model.Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return status.Errorf(codes.DataLoss, "%s: %v", dir, err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return status.Errorf(codes.Internal, "encode spec: %v", err)
	}
	if err := stream.Send(&api.ModelChunk{Manifest: raw, SpecJson: specJSON}); err != nil {
		return err
	}
	for _, p := range man.Params {
		if p.File != filepath.Base(p.File) {
			return status.Errorf(codes.DataLoss, "%s: param %s: file %q is not a plain name", dir, p.Name, p.File)
		}
		if err := sendFile(stream, roots, filepath.Join(dir, p.File), p.File); err != nil {
			return err
		}
	}
	// A recommender's embedding tables, after the parameters: ids, then rows.
	for _, t := range man.Tables {
		files, err := t.TableFiles()
		if err != nil {
			return status.Errorf(codes.DataLoss, "%s: %v", dir, err)
		}
		for _, f := range files {
			if err := sendFile(stream, roots, filepath.Join(dir, f), f); err != nil {
				return err
			}
		}
	}
	return nil
}

func sendFile(stream grpc.ServerStreamingServer[api.ModelChunk], roots confine.Roots, path, name string) error {
	f, err := roots.Open(path)
	if errors.Is(err, confine.ErrOutside) {
		return status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	if err != nil {
		return status.Errorf(codes.DataLoss, "%v", err)
	}
	defer f.Close()
	buf := make([]byte, modelChunk)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if err := stream.Send(&api.ModelChunk{File: name, Data: buf[:n]}); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return status.Errorf(codes.DataLoss, "%s: %v", path, err)
		}
	}
}

// errNoHolder: no other agent keeps the model.
var errNoHolder = errors.New("no other agent keeps the model")

// relayModel asks every other registered node's agent in turn and passes on
// the first answer that is not NotFound.
func (c *Server) relayModel(ctx context.Context, req *api.FetchModelRequest, stream grpc.ServerStreamingServer[api.ModelChunk]) error {
	nodes, err := coord.ListJSON[schema.NodeRecord](ctx, c.cli, coord.NodePrefix())
	if err != nil {
		return etcdUnavailable("list nodes", err)
	}
	for _, n := range nodes {
		if n.Name == c.node || n.State == api.NodeDown || c.peers.IsDown(n.Name) {
			continue
		}
		err := relayModelFrom(ctx, n.APIAddr, c.dialCreds(), req, stream)
		if status.Code(err) != codes.NotFound {
			return err
		}
	}
	return errNoHolder
}

// relayModelFrom copies one agent's local answer onto stream. Nothing is
// sent before its first chunk arrives, so a NotFound leaves stream clean.
func relayModelFrom(ctx context.Context, addr string, creds credentials.TransportCredentials, req *api.FetchModelRequest,
	stream grpc.ServerStreamingServer[api.ModelChunk]) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	local := &api.FetchModelRequest{Name: req.GetName(), Pass: req.GetPass(), Latest: req.GetLatest(), Local: true}
	from, err := api.NewControlClient(conn).FetchModel(ctx, local)
	if err != nil {
		return err
	}
	for {
		chunk, err := from.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
	}
}
