package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

// pyCheck prints, per array, "name shape sha256(tobytes)" for an npz (by
// numpy) and a safetensors file (its header parsed by hand, the data by
// numpy), so that the test holds the files to what numpy reads.
const pyCheck = `
import sys, json, struct, hashlib, numpy as np
npz = np.load(sys.argv[1])
for k in sorted(npz.files):
    a = npz[k]
    print("npz", k, a.dtype, list(a.shape), hashlib.sha256(a.tobytes()).hexdigest())
raw = open(sys.argv[2], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8+n])
spans = sorted(v["data_offsets"] for k, v in h.items() if k != "__metadata__")
ends = [0] + [e for s, e in spans]
if [s for s, e in spans] != ends[:-1] or ends[-1] != len(raw) - 8 - n or n % 8:
    print("offsets not contiguous", spans, len(raw) - 8 - n)
for k in sorted(h):
    if k == "__metadata__": continue
    s, e = h[k]["data_offsets"]
    dt = {"F32": "<f4", "U64": "<u8"}[h[k]["dtype"]]
    if (8 + n + s) % np.dtype(dt).itemsize: print("unaligned", k)
    a = np.frombuffer(raw[8+n+s:8+n+e], dtype=dt).reshape(h[k]["shape"])
    print("st", k, a.dtype, list(a.shape), hashlib.sha256(a.tobytes()).hexdigest())
`

func TestNumpyReadsNPZAndSafetensors(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no numpy: %v", err)
	}
	ps := []model.ParamManifest{{Name: "w0", Shape: []int{3, 2}}, {Name: "b0", Shape: []int{2}}, {Name: "s", Shape: []int{1}}}
	params := [][]float32{{1, -2, 3.5, 4, 5, 6e-7}, {0.25, -0}, {42}}
	man := Manifest{Manifest: model.Manifest{Kind: "program", Pass: 2, Step: 9}, Job: "j"}
	for j := range ps {
		sum := sha256.Sum256(model.Float32Bytes(params[j]))
		ps[j].SHA256, ps[j].File = hex.EncodeToString(sum[:]), ps[j].Name+model.ParamFileExt
	}
	man.Params = ps
	got := numpyReads(t, py, man, params, nil)
	for _, p := range ps {
		shape := strings.ReplaceAll(fmt.Sprint(p.Shape), " ", ", ")
		for _, kind := range []string{"npz", "st"} {
			want := kind + " " + p.Name + " float32 " + shape + " " + p.SHA256
			if !strings.Contains(got, want) {
				t.Errorf("numpy does not read %q:\n%s", want, got)
			}
		}
	}
}

func TestRawExportIsAModelDirectory(t *testing.T) {
	m, err := model.New(model.Spec{Kind: model.KindLinear, Inputs: 3, Outputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	params := [][]float32{{1, 2, 3}, {4}}
	dir, err := model.WriteModel(src, 1, 5, m, params)
	if err != nil {
		t.Fatal(err)
	}
	man, got, err := model.ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Write(out, FormatRaw, Manifest{Manifest: man, Job: "j"}, got, nil); err != nil {
		t.Fatal(err)
	}
	if _, back, err := model.ReadModel(out); err != nil || back[1][0] != 4 {
		t.Fatalf("a raw export does not read back as a model: %v %v", back, err)
	}
	if _, err := os.Stat(filepath.Join(out, "w.f32")); err != nil {
		t.Fatal(err)
	}
}

// numpyReads writes man as npz and safetensors and returns what pyCheck
// prints of them.
func numpyReads(t *testing.T, py string, man Manifest, params [][]float32, tables []model.TableRows) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{FormatNPZ, FormatSafetensors} {
		if _, err := Write(dir, f, man, params, tables); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(py, "-c", pyCheck, filepath.Join(dir, NPZFile), filepath.Join(dir, SafetensorsFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}
