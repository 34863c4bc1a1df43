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
	// Tables and TableRows count a recommender's embedding tables and
	// their rows (absent for a model without tables).
	Tables    int `json:"tables,omitempty"`
	TableRows int `json:"table_rows,omitempty"`
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
file's size and sha256 against the model's manifest, and write it into DIR:
npz (model.npz, one NAME.npy per parameter: numpy.load reads it), safetensors
(model.safetensors: safetensors, PyTorch and serving stacks read it) or raw (the
model files, NAME.f32, which init_from.dir reads back). A recommender's
embedding tables come too: in npz table.NAME.ids.npy (uint64, (rows,)) and
table.NAME.npy (float32, (rows, dim)); in safetensors the tensors table.NAME.ids
(U64) and table.NAME (F32 [rows, dim]); in raw table.NAME.ids and
table.NAME.f32, as in the pass directory. manifest.json beside it keeps the
names, shapes, per-file sha256 (of the little-endian bytes, equal to
sha256(array.tobytes()) in numpy), the tables, the pass, step and the job's
spec. A purge of the job does not touch DIR.
With -o json: {"name", "pass", "step", "format", "dir", "files"}, and
"tables", "table_rows" for a model with embedding tables.`,
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
	man, params, tables, err := receiveModel(ctx, client, req)
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
	files, err := export.Write(out, format, man, params, tables)
	if err != nil {
		return err
	}
	res := modelResult{Name: req.Name, Pass: man.Pass, Step: man.Step, Format: format, Dir: out, Files: files, Tables: len(tables)}
	for _, t := range tables {
		res.TableRows += len(t.IDs)
	}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, res)
	}
	what := fmt.Sprintf("%d parameters", len(man.Params))
	if len(tables) > 0 {
		what += fmt.Sprintf(", %d embedding tables (%d rows)", len(tables), res.TableRows)
	}
	_, err = fmt.Fprintf(a.stdout, "job %s: pass %d (step %d), %s, sha256 checked; wrote %s in %s\n",
		req.Name, man.Pass, man.Step, what, strings.Join(files, ", "), out)
	return err
}

// badModelError is a model that arrived but does not match its manifest.
type badModelError struct{ msg string }

func (e *badModelError) Error() string {
	return e.msg + "; fetch it again, or check the model files on the node"
}

// receiveModel reads the stream: the manifest and spec, then the files in
// the manifest's order (the parameters', then each embedding table's ids
// and rows), each checked against its size and sha256.
func receiveModel(ctx context.Context, client api.ControlClient, req *api.FetchModelRequest) (export.Manifest, [][]float32, []model.TableRows, error) {
	stream, err := client.FetchModel(ctx, req)
	if err != nil {
		return export.Manifest{}, nil, nil, err
	}
	first, err := stream.Recv()
	if err != nil {
		return export.Manifest{}, nil, nil, err
	}
	man := export.Manifest{Job: req.Name, Spec: first.GetSpecJson()}
	if err := json.Unmarshal(first.GetManifest(), &man.Manifest); err != nil || len(man.Params) == 0 {
		return man, nil, nil, &badModelError{fmt.Sprintf("job %s: the agent sent no usable manifest (%v)", req.Name, err)}
	}
	index, err := modelFileIndex(req.Name, man.Manifest)
	if err != nil {
		return man, nil, nil, err
	}
	data := make([][]byte, len(man.Params)+2*len(man.Tables))
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return man, nil, nil, err
		}
		j, ok := index[chunk.GetFile()]
		if !ok {
			return man, nil, nil, &badModelError{fmt.Sprintf("job %s: the agent sent file %q, which the manifest does not list", req.Name, chunk.GetFile())}
		}
		data[j] = append(data[j], chunk.GetData()...)
	}
	params, tables, err := checkModelData(req.Name, man.Manifest, data)
	return man, params, tables, err
}

// modelFileIndex numbers the files the manifest lists: the parameters'
// from 0, then each table's ids and rows.
func modelFileIndex(job string, man model.Manifest) (map[string]int, error) {
	index := map[string]int{}
	for j, p := range man.Params {
		index[p.File] = j
	}
	for i, t := range man.Tables {
		files, err := t.TableFiles()
		if err != nil {
			return nil, &badModelError{fmt.Sprintf("job %s: %v", job, err)}
		}
		for k, f := range files {
			index[f] = len(man.Params) + 2*i + k
		}
	}
	if len(index) != len(man.Params)+2*len(man.Tables) {
		return nil, &badModelError{fmt.Sprintf("job %s: the manifest names a file twice", job)}
	}
	return index, nil
}

// checkModelData decodes data (numbered as modelFileIndex numbers the
// files), each file checked against the manifest.
func checkModelData(job string, man model.Manifest, data [][]byte) ([][]float32, []model.TableRows, error) {
	params := make([][]float32, len(man.Params))
	for j, p := range man.Params {
		v, err := model.DecodeParam(p, data[j])
		if err != nil {
			return nil, nil, &badModelError{fmt.Sprintf("job %s: parameter %s: %v", job, p.Name, err)}
		}
		params[j] = v
	}
	var tables []model.TableRows
	for i, t := range man.Tables {
		j := len(man.Params) + 2*i
		rows, err := model.DecodeTable(t, data[j], data[j+1])
		if err != nil {
			return nil, nil, &badModelError{fmt.Sprintf("job %s: %v", job, err)}
		}
		tables = append(tables, rows)
	}
	return params, tables, nil
}
