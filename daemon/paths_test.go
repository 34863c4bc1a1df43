package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// pathAgent is an agent that allows only its data dir (no --allowed-path),
// and a spec directory holding the test shards.
func pathAgent(t *testing.T) (a *testAgent, specDir string) {
	t.Helper()
	cfg := testConfig(t, "node-paths", startEtcd(t))
	cfg.AllowedPaths = nil
	a = startAgent(t, cfg)
	specDir = filepath.Join(t.TempDir(), "job")
	if err := os.MkdirAll(filepath.Join(specDir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeShards(t, filepath.Join(specDir, "data"))
	return a, specDir
}

// specRequest writes a spec file into dir (as gctl's user would) and builds
// the request gctl sends for it; edit changes the spec before it is sent.
func specRequest(t *testing.T, dir, name string, edit func(map[string]any)) *api.SubmitJobRequest {
	t.Helper()
	file := filepath.Join(dir, name+".yaml")
	yaml := "name: " + name + "\nmodel: {kind: linear, inputs: 3}\ndata: {train: data/d-train-*}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(yaml))
	raw := specJSON(t, name, filepath.Join(dir, "data", "d-train-*"), filepath.Join(dir, "data", "d-test-*"), 1, 1, edit)
	return &api.SubmitJobRequest{SpecJson: raw, SpecFile: file, SpecSha256: sum[:]}
}

// Confined paths (issue 10): through the real agent, paths out of the data
// dir and the spec's own directory tree are refused at submit with
// InvalidArgument naming the path and the roots, and nothing is created.
func TestSubmitConfinesPaths(t *testing.T) {
	t.Parallel()
	a, specDir := pathAgent(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(specDir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(specDir, "data", "e-train-0")); err != nil {
		t.Fatal(err)
	}
	ckpt := func(dir string) func(map[string]any) { return withCheckpointDir(dir) }
	for _, tc := range []struct {
		name, field, path string
		edit              func(map[string]any)
	}{
		{"/etc", "checkpoint.dir", "/etc/gtrain-pwn", ckpt("/etc/gtrain-pwn")},
		{"../../x", "checkpoint.dir", specDir + "/../../x", ckpt(specDir + "/../../x")},
		{"symlink out of the root", "checkpoint.dir", filepath.Join(specDir, "out", "ckpt"), ckpt(filepath.Join(specDir, "out", "ckpt"))},
		{"data glob out", "data.test", "/etc/*", func(m map[string]any) { m["data"].(map[string]any)["test"] = "/etc/*" }},
		{"a match that is a symlink out", "data.train", filepath.Join(specDir, "data", "e-train-*"), func(m map[string]any) {
			m["data"].(map[string]any)["train"] = filepath.Join(specDir, "data", "e-train-*")
		}},
	} {
		_, err := a.client.SubmitJob(context.Background(), specRequest(t, specDir, "confined", tc.edit))
		assertStatus(t, tc.name, err, codes.InvalidArgument, tc.field, tc.path, a.cfg.DataDir, specDir, "outside the allowed paths", "--allowed-path")
	}
	for _, p := range []string{"/etc/gtrain-pwn", filepath.Join(filepath.Dir(filepath.Dir(specDir)), "x"), filepath.Join(outside, "ckpt")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after the rejected submits (%v)", p, err)
		}
	}
	if got := jobNames(t, a); len(got) != 0 {
		t.Errorf("rejected jobs were recorded: %v", got)
	}
}

// Without the spec file (or with one the agent cannot read as sent), the
// spec's directory is not a root; with it, the paths are accepted and
// stored resolved.
func TestSubmitSpecDirRoot(t *testing.T) {
	t.Parallel()
	a, specDir := pathAgent(t)
	req := specRequest(t, specDir, "nofile", nil)
	req.SpecFile, req.SpecSha256 = "", nil
	_, err := a.client.SubmitJob(context.Background(), req)
	assertStatus(t, "no spec file", err, codes.InvalidArgument, "data.train", "outside the allowed paths")

	req = specRequest(t, specDir, "changed", nil)
	req.SpecSha256[0]++
	_, err = a.client.SubmitJob(context.Background(), req)
	assertStatus(t, "another file", err, codes.InvalidArgument, "data.train", "not the file gctl read")

	// A file that is not a job spec does not make its directory a root.
	sum := sha256.Sum256(must(os.ReadFile("/etc/passwd")))
	req = specRequest(t, specDir, "passwd", withCheckpointDir("/etc/gtrain-pwn"))
	req.SpecFile, req.SpecSha256 = "/etc/passwd", sum[:]
	_, err = a.client.SubmitJob(context.Background(), req)
	assertStatus(t, "not a spec", err, codes.InvalidArgument, "/etc/passwd is not a job spec")

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(specDir, link); err != nil {
		t.Fatal(err)
	}
	req = specRequest(t, specDir, "good", withCheckpointDir(filepath.Join(link, "ckpt")))
	if _, err := a.client.SubmitJob(context.Background(), req); err != nil {
		t.Fatalf("a spec under its own directory: %v", err)
	}
	rec, _, err := coord.GetJobRecord(context.Background(), etcdClient(t, a.cfg.EtcdEndpoints[0]), "good")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(specDir, "ckpt"); rec.Spec.Checkpoint.Dir != want {
		t.Errorf("checkpoint.dir stored as %s, want it resolved to %s", rec.Spec.Checkpoint.Dir, want)
	}
}

// A job whose paths are under the agent's data dir needs no spec file.
func TestSubmitUnderDataDir(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "node-datadir", startEtcd(t))
	cfg.AllowedPaths = nil
	a := startAgent(t, cfg)
	train, test := writeShards(t, cfg.DataDir)
	raw := specJSON(t, "in-data-dir", train, test, 1, 1, withCheckpointDir(filepath.Join(cfg.DataDir, "shared")))
	if _, err := a.client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: raw}); err != nil {
		t.Fatalf("paths under the data dir: %v", err)
	}
}

func jobNames(t *testing.T, a *testAgent) []string {
	t.Helper()
	doc, err := a.client.ListJobs(context.Background(), &api.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(doc.Json, &rows); err != nil {
		t.Fatalf("%v: %s", err, doc.Json)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	return names
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Issue 19, item 7: a path whose missing parts would be created outside the
// roots is refused at submit (InvalidArgument, exit 2 in gctl) naming the
// field: a ".." after a part that does not exist yet, a missing part under
// a dangling symlink out of the root, and a ".." after a symlink out of the
// root (which the kernel resolves beside the symlink's target, not back in
// the root). Nothing is created.
func TestSubmitRefusesMissingPartsOutside(t *testing.T) {
	t.Parallel()
	a, specDir := pathAgent(t)
	outside := filepath.Join(t.TempDir(), "a")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "gone"), filepath.Join(specDir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(specDir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"dot-dot after a missing part", specDir + "/new/../ckpt", "does not exist yet"},
		{"under a dangling symlink", specDir + "/dangling/ckpt", "cannot resolve the path"},
		{"dot-dot after a symlink out", specDir + "/out/../ckpt", "outside the allowed paths"},
	} {
		_, err := a.client.SubmitJob(context.Background(), specRequest(t, specDir, "missing", withCheckpointDir(tc.path)))
		assertStatus(t, tc.name, err, codes.InvalidArgument, "checkpoint.dir", tc.path, tc.want)
	}
	for _, p := range []string{filepath.Join(specDir, "new"), filepath.Join(outside, "gone"), filepath.Join(filepath.Dir(outside), "ckpt")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after the rejected submits (%v)", p, err)
		}
	}
}
