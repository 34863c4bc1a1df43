package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
)

// modelAgent answers FetchModel as an agent does: the pass directory
// dir's manifest, then its files in the manifest's order (parameters,
// then each table's ids and rows), in chunks of 5 bytes; flip names a
// file whose first byte it alters on the way.
type modelAgent struct {
	api.UnimplementedControlServer
	dir, flip string
}

func (m *modelAgent) FetchModel(_ *api.FetchModelRequest, stream grpc.ServerStreamingServer[api.ModelChunk]) error {
	raw, err := os.ReadFile(filepath.Join(m.dir, model.ManifestFile))
	if err != nil {
		return err
	}
	var man model.Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return err
	}
	if err := stream.Send(&api.ModelChunk{Manifest: raw, SpecJson: []byte(`{"name":"rec"}`)}); err != nil {
		return err
	}
	var files []string
	for _, p := range man.Params {
		files = append(files, p.File)
	}
	for _, t := range man.Tables {
		files = append(files, t.IDsFile, t.File)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(m.dir, f))
		if err != nil {
			return err
		}
		if f == m.flip {
			data[0] ^= 1
		}
		for ; len(data) > 0; data = data[min(5, len(data)):] {
			if err := stream.Send(&api.ModelChunk{File: f, Data: data[:min(5, len(data))]}); err != nil {
				return err
			}
		}
	}
	return nil
}

// recommenderPass writes a recommender's pass directory: one dense
// parameter and two tables of 3 and 1 rows.
func recommenderPass(t *testing.T) string {
	t.Helper()
	tables := []model.TableRows{
		{Name: "user", Dim: 2, IDs: []uint64{1, 5, 9}, Vals: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "item", Dim: 1, IDs: []uint64{4}, Vals: []float32{7}},
	}
	ps := []model.ParamSpec{{Name: "w0", Shape: []int{2}}}
	dir, err := model.WriteParamsState(t.TempDir(), 2, 11, model.Spec{Kind: model.KindRecommender}, ps, [][]float32{{0.5, -1}}, nil, tables)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestJobModelFetchesTables: gctl job model of a recommender checks and
// writes its embedding tables beside the parameters (raw: the pass
// directory's files, with the manifest's tables) and says how many.
func TestJobModelFetchesTables(t *testing.T) {
	pass := recommenderPass(t)
	addr := startAgent(t, &modelAgent{dir: pass})
	a, stdout, stderr := newTestApp(t)
	out := filepath.Join(t.TempDir(), "export")
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "model", "rec", "--out", out, "--format", "raw")
	if r.code != 0 || !strings.Contains(r.stdout, "1 parameters, 2 embedding tables (4 rows), sha256 checked") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	man, _, err := model.ReadModel(out)
	if err != nil {
		t.Fatal(err)
	}
	src, _, _ := model.ReadModel(pass)
	if !slices.Equal(man.Tables, src.Tables) {
		t.Fatalf("the export's manifest lists tables %+v, want %+v", man.Tables, src.Tables)
	}
	for _, tm := range man.Tables {
		for _, f := range []string{tm.IDsFile, tm.File} {
			got, err1 := os.ReadFile(filepath.Join(out, f))
			want, err2 := os.ReadFile(filepath.Join(pass, f))
			if err1 != nil || err2 != nil || string(got) != string(want) {
				t.Errorf("%s: the export's bytes differ from the pass directory's (%v, %v)", f, err1, err2)
			}
		}
	}

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "-o", "json", "job", "model", "rec", "--out", filepath.Join(t.TempDir(), "npz"))
	var res modelResult
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || res.Tables != 2 || res.TableRows != 4 {
		t.Errorf("-o json: exit %d, %+v (%v), want 2 tables of 4 rows: %s", r.code, res, err, r.stderr)
	}
}

// TestJobModelRefusesABadTable: a table file whose bytes do not match the
// manifest's sha256 is refused, naming the file, and nothing is written.
func TestJobModelRefusesABadTable(t *testing.T) {
	addr := startAgent(t, &modelAgent{dir: recommenderPass(t), flip: "table.item.f32"})
	a, stdout, stderr := newTestApp(t)
	out := filepath.Join(t.TempDir(), "export")
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "model", "rec", "--out", out)
	if r.code == 0 || !strings.Contains(r.stderr, "table.item.f32: sha256") || !strings.Contains(r.stderr, "fetch it again") {
		t.Errorf("exit %d, stderr %q: want a refusal naming table.item.f32", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out was created for a bad model: %v", err)
	}
}
