package rolecfg

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/sandbox"
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

// The roles' program policy hides the data dir and both key files, and
// follows --allow-unisolated-programs where the node cannot isolate.
func TestArgsProgramPolicy(t *testing.T) {
	a := Args{DataDir: "/data", TLS: pki.Files{CA: "/ca", Cert: "/c", Key: "/k"}, AllowUnisolatedPrograms: true}
	a.Etcd.Key = "/ek"
	p := a.Common(nil, nil).Programs
	if p.DataDir != "/data" || !slices.Equal(p.Hide, []string{"/k", "/ek"}) {
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
