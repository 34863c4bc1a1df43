package controlapi

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/model"
)

// sentChunks records what sendModel sends (the stream's other methods are
// not called).
type sentChunks struct {
	grpc.ServerStream
	chunks []*api.ModelChunk
}

func (s *sentChunks) Send(c *api.ModelChunk) error {
	s.chunks = append(s.chunks, c)
	return nil
}

// TestSendModelSendsTables: after the manifest and the parameters come
// each embedding table's ids and rows, in the manifest's order, byte for
// byte; a table file that leads out of the job's roots is refused.
func TestSendModelSendsTables(t *testing.T) {
	root := t.TempDir()
	tables := []model.TableRows{
		{Name: "user", Dim: 2, IDs: []uint64{1, 5}, Vals: []float32{1, 2, 3, 4}},
		{Name: "item", Dim: 1, IDs: []uint64{4}, Vals: []float32{7}},
	}
	ps := []model.ParamSpec{{Name: "w0", Shape: []int{2}}}
	dir, err := model.WriteParamsState(filepath.Join(root, "model"), 0, 3, model.Spec{Kind: model.KindRecommender}, ps, [][]float32{{1, 2}}, nil, tables)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := confine.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	var s sentChunks
	if err := sendModel(&s, roots, dir, map[string]string{"name": "rec"}); err != nil {
		t.Fatal(err)
	}
	var files []string
	got := map[string][]byte{}
	for _, c := range s.chunks[1:] {
		if len(files) == 0 || files[len(files)-1] != c.GetFile() {
			files = append(files, c.GetFile())
		}
		got[c.GetFile()] = append(got[c.GetFile()], c.GetData()...)
	}
	want := []string{"w0.f32", "table.user.ids", "table.user.f32", "table.item.ids", "table.item.f32"}
	if len(s.chunks[0].GetManifest()) == 0 || !slices.Equal(files, want) {
		t.Fatalf("sent the manifest (%d bytes), then %v; want %v", len(s.chunks[0].GetManifest()), files, want)
	}
	for _, f := range want {
		if disk, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(disk) != string(got[f]) {
			t.Errorf("%s: sent %d bytes, the file holds %d (%v)", f, len(got[f]), len(disk), err)
		}
	}

	outside := filepath.Join(t.TempDir(), "rows")
	if err := os.WriteFile(outside, got["table.item.f32"], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "table.item.f32")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "table.item.f32")); err != nil {
		t.Fatal(err)
	}
	if err := sendModel(&sentChunks{}, roots, dir, nil); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a table file symlinked out of the job's roots: %v, want FailedPrecondition", err)
	}
}
