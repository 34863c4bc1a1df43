package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/internal/fileperm"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/model/export"
)

// modelResult is `job model -o json`.
type modelResult struct {
	Name   string   `json:"name"`
	Pass   int      `json:"pass"`
	Step   int64    `json:"step"`
	Format string   `json:"format"`
	Dir    string   `json:"dir"`
	Files  []string `json:"files"`
}

func (a *app) jobModelCommand() *cobra.Command {
	var (
		pass        int
		out, format string
	)
	cmd := &cobra.Command{
		Use:   "model NAME --out DIR",
		Short: "Fetch a job's model and write it as npz, safetensors or raw files",
		Long: `Fetch one pass of the job's model (--pass P, from 0; default the newest) from any
agent (the one you reach fetches it from the node that keeps it), check every
parameter's sha256 against the model's manifest, and write it into DIR:
npz (model.npz, one NAME.npy per parameter: numpy.load reads it), safetensors
(model.safetensors: safetensors, PyTorch and serving stacks read it) or raw (the
model files, NAME.f32, which init_from.dir reads back). manifest.json beside it
keeps the names, shapes, per-parameter sha256 (of the little-endian float32
bytes, equal to sha256(array.tobytes()) in numpy), the pass, step and the job's
spec. A purge of the job does not touch DIR.
With -o json: {"name", "pass", "step", "format", "dir", "files"}.`,
		Example: "  gctl job model fit-a-line --out ./fit-a-line-model\n  gctl job model fit-a-line --pass 2 --out /models/fal --format safetensors",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("--out is required: the directory to write the model into")
			}
			if !slices.Contains(export.Formats, format) {
				return usagef("--format %s: want one of %s", format, strings.Join(export.Formats, ", "))
			}
			if cmd.Flags().Changed("pass") && pass < 0 {
				return usagef("--pass %d: passes count from 0", pass)
			}
			req := &api.FetchModelRequest{Name: name, Latest: !cmd.Flags().Changed("pass"), Pass: int32(min(pass, 1<<31-1))}
			return a.fetchModel(cmd.Context(), req, out, format)
		},
	}
	f := cmd.Flags()
	f.IntVar(&pass, "pass", 0, "the pass whose model to fetch, from 0 (default: the newest)")
	f.StringVar(&out, "out", "", "directory to write the model into (created)")
	f.StringVar(&format, "format", export.FormatNPZ, "npz, safetensors or raw")
	return cmd
}

func (a *app) fetchModel(ctx context.Context, req *api.FetchModelRequest, out, format string) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	op := fmt.Sprintf("fetch the model of job %q", req.Name)
	man, params, err := receiveModel(ctx, client, req)
	if err != nil {
		var bad *badModelError
		if errors.As(err, &bad) {
			return err
		}
		return &agentError{op: op, addr: s.Addr, from: s.AddrFrom, err: err}
	}
	if err := os.MkdirAll(out, fileperm.Dir); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	files, err := export.Write(out, format, man, params)
	if err != nil {
		return err
	}
	res := modelResult{Name: req.Name, Pass: man.Pass, Step: man.Step, Format: format, Dir: out, Files: files}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, res)
	}
	_, err = fmt.Fprintf(a.stdout, "job %s: pass %d (step %d), %d parameters, sha256 checked; wrote %s in %s\n",
		req.Name, man.Pass, man.Step, len(man.Params), strings.Join(files, ", "), out)
	return err
}

// badModelError is a model that arrived but does not match its manifest.
type badModelError struct{ msg string }

func (e *badModelError) Error() string {
	return e.msg + "; fetch it again, or check the model files on the node"
}

// receiveModel reads the stream: the manifest and spec, then the files in
// the manifest's order, each checked against its size and sha256.
func receiveModel(ctx context.Context, client api.ControlClient, req *api.FetchModelRequest) (export.Manifest, [][]float32, error) {
	stream, err := client.FetchModel(ctx, req)
	if err != nil {
		return export.Manifest{}, nil, err
	}
	first, err := stream.Recv()
	if err != nil {
		return export.Manifest{}, nil, err
	}
	man := export.Manifest{Job: req.Name, Spec: first.GetSpecJson()}
	if err := json.Unmarshal(first.GetManifest(), &man.Manifest); err != nil || len(man.Params) == 0 {
		return man, nil, &badModelError{fmt.Sprintf("job %s: the agent sent no usable manifest (%v)", req.Name, err)}
	}
	data := make([][]byte, len(man.Params))
	index := map[string]int{}
	for j, p := range man.Params {
		index[p.File] = j
	}
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return man, nil, err
		}
		j, ok := index[chunk.GetFile()]
		if !ok {
			return man, nil, &badModelError{fmt.Sprintf("job %s: the agent sent file %q, which the manifest does not list", req.Name, chunk.GetFile())}
		}
		data[j] = append(data[j], chunk.GetData()...)
	}
	params, err := checkModelData(req.Name, man.Manifest, data)
	return man, params, err
}

func checkModelData(job string, man model.Manifest, data [][]byte) ([][]float32, error) {
	params := make([][]float32, len(data))
	for j, p := range man.Params {
		v, err := model.DecodeParam(p, data[j])
		if err != nil {
			return nil, &badModelError{fmt.Sprintf("job %s: parameter %s: %v", job, p.Name, err)}
		}
		params[j] = v
	}
	return params, nil
}
