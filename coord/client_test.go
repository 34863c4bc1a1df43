package coord

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/logcheck"
)

func TestSplitEndpoints(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"127.0.0.1:2379", []string{"http://127.0.0.1:2379"}},
		{"a:1,b:2", []string{"http://a:1", "http://b:2"}},
		{" a:1 , ,b:2,", []string{"http://a:1", "http://b:2"}},
		{"https://a:1,b:2", []string{"https://a:1", "http://b:2"}},
		{"http://a:1", []string{"http://a:1"}},
		{"", nil},
		{" , ", nil},
	}
	for _, c := range cases {
		if got := SplitEndpoints(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitEndpoints(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDialWithoutEndpoints(t *testing.T) {
	for _, eps := range [][]string{nil, {}, SplitEndpoints(" , ")} {
		cli, err := Dial(t.Context(), eps, nil)
		if err == nil {
			cli.Close()
			t.Fatalf("Dial(%q) succeeded", eps)
		}
		if !strings.Contains(err.Error(), "endpoints") {
			t.Errorf("Dial(%q) error %q does not say endpoints are missing", eps, err)
		}
	}
}

func TestDialUnreachableNamesEndpoint(t *testing.T) {
	addr, err := freeLocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	ep := "http://" + addr
	logged := &logcheck.Buffer{} // the etcd client's goroutines log
	log := slog.New(slog.NewTextHandler(logged, nil))
	cli, err := Dial(ctx, []string{ep}, log)
	if err == nil {
		cli.Close()
		t.Fatalf("Dial(%s) of a closed port succeeded", ep)
	}
	if !strings.Contains(err.Error(), ep) {
		t.Errorf("Dial error %q does not name the endpoint %s", err, ep)
	}
	// The client's own complaint reaches the role's log at warn level.
	if got := logged.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "component=etcd-client") {
		t.Errorf("the etcd client's warnings did not reach the logger; logged:\n%s", got)
	}
}

func TestDialShared(t *testing.T) {
	cli := dialTest(t)
	if _, err := cli.Put(t.Context(), Root+"dial-test", "ok"); err != nil {
		t.Errorf("put through a dialed client: %v", err)
	}
}
