package etcdtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func count(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func put(t *testing.T, cli *clientv3.Client, key string) {
	t.Helper()
	if _, err := cli.Put(context.Background(), key, "v"); err != nil {
		t.Fatal(err)
	}
}

func TestFreshIsEmptyAndEmptiedAfterwards(t *testing.T) {
	shared := Dial(t, Shared(t).Endpoint)
	put(t, shared, "left-by-"+UniqueName(t))
	t.Run("fresh", func(t *testing.T) {
		cli := Dial(t, Fresh(t).Endpoint)
		if n := count(t, cli); n != 0 {
			t.Fatalf("a fresh etcd holds %d keys", n)
		}
		put(t, cli, "fixed-key")
	})
	if n := count(t, shared); n != 0 {
		t.Fatalf("%d keys left after the fresh test", n)
	}
}

// fatalTB records Fatal instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

type fatalled struct{}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(fatalled{})
}

func TestFreshRefusesASecondHolder(t *testing.T) {
	Fresh(t)
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != (fatalled{}) {
				t.Fatalf("recovered %v, want the test to fail", r)
			}
		}()
		Fresh(f)
	}()
	if !strings.Contains(f.msg, "another test holds the shared etcd") {
		t.Fatalf("Fatal(%q), want it to name the other holder", f.msg)
	}
}

func TestStartIsAMemberOfItsOwn(t *testing.T) {
	put(t, Dial(t, Shared(t).Endpoint), UniqueName(t))
	own := Start(t)
	if own.Endpoint == Shared(t).Endpoint {
		t.Fatalf("Start returned the shared member %s", own.Endpoint)
	}
	if n := count(t, Dial(t, own.Endpoint)); n != 0 {
		t.Fatalf("a new member holds %d keys", n)
	}
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName(t), UniqueName(t)
	if a == b || !strings.HasPrefix(a, "testuniquename-") || a != strings.ToLower(a) {
		t.Fatalf("names %q and %q: want two different lower-case names from the test's", a, b)
	}
}
