package rolecfg

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// Every field of Common the command line carries comes from the field of
// Args of the same name; only the log and the metrics come from elsewhere,
// and Programs from several fields (TestArgsProgramPolicy).
func TestArgsCommon(t *testing.T) {
	var a Args
	fill(t, reflect.ValueOf(&a).Elem(), "", "x", new(int))
	c := reflect.ValueOf(a.Common(nil, nil))
	for i := 0; i < c.NumField(); i++ {
		name := c.Type().Field(i).Name
		if name == "Log" || name == "Metrics" || name == "Programs" {
			continue
		}
		from := reflect.ValueOf(a).FieldByName(name)
		if !from.IsValid() || !reflect.DeepEqual(from.Interface(), c.Field(i).Interface()) {
			t.Errorf("Common.%s = %v, want Args.%s (%v)", name, c.Field(i), name, from)
		}
	}
}

// The roles' program policy hides the data dir, /etc/gtrain, the key
// files (their top-level directories are not covered), the agent's config
// file and gossip key file with its directory, and follows
// --allow-unisolated-programs where the node cannot isolate.
func TestArgsProgramPolicy(t *testing.T) {
	a := Args{DataDir: "/data", TLS: pki.Files{CA: "/ca", Cert: "/c", Key: "/k"}, AllowUnisolatedPrograms: true,
		AgentConfig: "/etc/agent.yaml", GossipKeyFile: "/srv/keys/gossip.key"}
	a.Etcd.Key = "/ek"
	p := a.Common(nil, nil).Programs
	if want := []string{"/etc/gtrain", "/etc/agent.yaml", "/k", "/ek", "/srv/keys/gossip.key", "/srv/keys"}; p.DataDir != "/data" || !slices.Equal(p.Hide, want) {
		t.Errorf("policy %+v", p)
	}
	if mode, _ := sandbox.Decide(true); p.Mode != mode {
		t.Errorf("mode %v, want %v", p.Mode, mode)
	}
	if p.Mode == sandbox.Refuse {
		t.Error("refused though unisolated programs are allowed")
	}
}

func TestCommonValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Common
		want string
	}{
		{Common{Job: "fit", SessionTTL: 1}, ""},
		{Common{SessionTTL: 1}, "pserver: Job must be set"},
		{Common{Job: "fit"}, "pserver: SessionTTL must be >= 1, got 0"},
	} {
		err := tc.c.Validate("pserver")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}

// A role's roots are the agent's, its data dir and the job's own
// directories: a shard under data.train's directory opens, one under the
// checkpoint.dir too, and a file beside them does not.
func TestCommonRoots(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"data", "ckpt", "other"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := &jobspec.Spec{Data: jobspec.DataSpec{Train: filepath.Join(base, "data", "train-*")},
		Checkpoint: jobspec.CheckpointSpec{Dir: filepath.Join(base, "ckpt")}}
	roots, err := Common{}.Roots(filepath.Join(base, "datadir"), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"data/f", "ckpt/f"} {
		if err := roots.Check(filepath.Join(base, ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := roots.Check(filepath.Join(base, "other", "f")); !errors.Is(err, confine.ErrOutside) {
		t.Errorf("a file beside the job's directories: %v, want ErrOutside", err)
	}
}

// TestProgramPolicyHides: a program's view covers /etc/gtrain, the agent's
// config file, every key file and the directory of each, but never a
// directory the system needs (a key lying in /etc is covered alone).
func TestProgramPolicyHides(t *testing.T) {
	tls := pki.Files{CA: "/srv/pki/ca.crt", Cert: "/srv/pki/n1.crt", Key: "/srv/pki/n1.key"}
	p := ProgramPolicy(true, "/data", tls, "/etc/etcd-client.key", "/etc/gtrain-agent.yaml", "/opt/gtrain/secret/gossip.key")
	for _, want := range []string{"/etc/gtrain", "/srv/pki/n1.key", "/srv/pki", "/etc/etcd-client.key",
		"/etc/gtrain-agent.yaml", "/opt/gtrain/secret/gossip.key", "/opt/gtrain/secret"} {
		if !slices.Contains(p.Hide, want) {
			t.Errorf("Hide %q lacks %s", p.Hide, want)
		}
	}
	for _, bad := range []string{"/etc", "/", "/opt"} {
		if slices.Contains(p.Hide, bad) {
			t.Errorf("Hide %q covers %s, which programs need", p.Hide, bad)
		}
	}
}
