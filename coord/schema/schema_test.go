package schema

import (
	"os/exec"
	"strings"
	"testing"
)

// The records are pure data: nothing this package needs, however
// indirectly, is an etcd client (the reason it is not part of coord), so
// that the pure cores that use a record do not link one.
func TestSchemaLinksNoEtcdClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		if strings.HasPrefix(dep, "go.etcd.io/etcd/client") || dep == "github.com/gtrain/gtrain/coord" {
			t.Errorf("coord/schema depends on %s", dep)
		}
	}
}

// GlobalCheckpoint.Has: step 0 (the start) always is one; others only
// while kept.
func TestGlobalCheckpointHas(t *testing.T) {
	g := GlobalCheckpoint{Step: 300, Pass: 2, Steps: []int64{100, 200, 300}}
	cases := []struct {
		g    GlobalCheckpoint
		step int64
		want bool
	}{
		{g, 0, true},
		{g, 100, true},
		{g, 200, true},
		{g, 300, true},
		{g, 150, false},
		{g, 400, false},
		{g, -1, false},
		{GlobalCheckpoint{}, 0, true},
		{GlobalCheckpoint{}, 1, false},
	}
	for _, c := range cases {
		if got := c.g.Has(c.step); got != c.want {
			t.Errorf("%+v.Has(%d) = %v, want %v", c.g, c.step, got, c.want)
		}
	}
}
