package export

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

// recommenderModel writes a pass directory with one dense parameter (of
// an odd size, so that a table's values would start 4 bytes off an 8-byte
// boundary if they followed it) and two tables, one of them empty, and
// reads it back.
func recommenderModel(t *testing.T) (Manifest, [][]float32, []model.TableRows) {
	t.Helper()
	tables := []model.TableRows{
		{Name: "user", Dim: 2, IDs: []uint64{3, 7, 1 << 60}, Vals: []float32{1, 2, 3, 4, 5, -6}},
		{Name: "item", Dim: 3},
	}
	s := model.Spec{Kind: model.KindRecommender}
	ps := []model.ParamSpec{{Name: "w0", Shape: []int{3}}}
	dir, err := model.WriteParamsState(t.TempDir(), 1, 9, s, ps, [][]float32{{0.5, 1.5, 2.5}}, nil, tables)
	if err != nil {
		t.Fatal(err)
	}
	man, params, err := model.ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]model.TableRows, len(man.Tables))
	for i, tm := range man.Tables {
		ids, _ := os.ReadFile(filepath.Join(dir, tm.IDsFile))
		vals, _ := os.ReadFile(filepath.Join(dir, tm.File))
		if got[i], err = model.DecodeTable(tm, ids, vals); err != nil {
			t.Fatal(err)
		}
	}
	return Manifest{Manifest: man, Job: "rec"}, params, got
}

// TestNumpyReadsTables: a recommender's tables are in the npz as
// table.NAME.ids.npy (uint64, (rows,)) and table.NAME.npy (float32,
// (rows, dim)), and in safetensors as U64 and F32 tensors of the same
// names, contiguous and aligned; numpy reads each with the manifest's
// sha256.
func TestNumpyReadsTables(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no numpy: %v", err)
	}
	man, params, tables := recommenderModel(t)
	got := numpyReads(t, py, man, params, tables)
	if strings.Contains(got, "offsets not contiguous") || strings.Contains(got, "unaligned") {
		t.Fatalf("safetensors layout:\n%s", got)
	}
	user, item := man.Tables[0], man.Tables[1]
	for _, kind := range []string{"npz", "st"} {
		for _, want := range []string{
			kind + " table.user.ids uint64 [3] " + user.IDsSHA256,
			kind + " table.user float32 [3, 2] " + user.SHA256,
			kind + " table.item.ids uint64 [0] " + item.IDsSHA256,
			kind + " table.item float32 [0, 3] " + item.SHA256,
			kind + " w0 float32 [3] " + man.Params[0].SHA256,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("numpy does not read %q:\n%s", want, got)
			}
		}
	}
}

// TestRawExportKeepsTables: a raw export of a recommender is its pass
// directory again: the table files under their names, with the manifest's
// sha256, and the manifest still lists them.
func TestRawExportKeepsTables(t *testing.T) {
	man, params, tables := recommenderModel(t)
	out := t.TempDir()
	files, err := Write(out, FormatRaw, man, params, tables)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"manifest.json", "table.item.f32", "table.item.ids", "table.user.f32", "table.user.ids", "w0.f32"}
	if slices.Sort(files); !slices.Equal(files, want) {
		t.Errorf("wrote %v, want %v", files, want)
	}
	back, _, err := model.ReadModel(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Tables, man.Tables) {
		t.Fatalf("the export's manifest lists tables %+v, want %+v", back.Tables, man.Tables)
	}
	for _, tm := range back.Tables {
		for f, sum := range map[string]string{tm.IDsFile: tm.IDsSHA256, tm.File: tm.SHA256} {
			data, err := os.ReadFile(filepath.Join(out, f))
			if h := sha256.Sum256(data); err != nil || hex.EncodeToString(h[:]) != sum {
				t.Errorf("%s: %v, sha256 %x, manifest says %s", f, err, h, sum)
			}
		}
	}
}

// TestWriteWantsTheManifestsTables: tables that the manifest does not
// list (or missing ones) are refused, not written.
func TestWriteWantsTheManifestsTables(t *testing.T) {
	man, params, tables := recommenderModel(t)
	if _, err := Write(t.TempDir(), FormatNPZ, man, params, tables[:1]); err == nil || !strings.Contains(err.Error(), "1 tables, manifest lists 1 and 2") {
		t.Errorf("one table for a manifest of two: %v", err)
	}
}

// TestDecodeTableChecksItsFiles: a table's files of the wrong size or
// sha256 are model.ErrCorruptModel naming the file.
func TestDecodeTableChecksItsFiles(t *testing.T) {
	man, _, tables := recommenderModel(t)
	tm := man.Tables[0]
	ids, vals := model.IDBytes(tables[0].IDs), model.Float32Bytes(tables[0].Vals)
	bad := slices.Clone(vals)
	bad[0] ^= 1
	for name, c := range map[string][2][]byte{"short ids": {ids[:8], vals}, "flipped value": {ids, bad}} {
		if _, err := model.DecodeTable(tm, c[0], c[1]); err == nil || !strings.Contains(err.Error(), "table.user.") {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
	tm.IDsFile = "../x"
	if _, err := model.DecodeTable(tm, ids, vals); err == nil {
		t.Error("a table file outside the directory is accepted")
	}
}
