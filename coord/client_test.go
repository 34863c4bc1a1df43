package coord

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
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
		cli, err := Dial(t.Context(), eps)
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
	cli, err := Dial(ctx, []string{ep})
	if err == nil {
		cli.Close()
		t.Fatalf("Dial(%s) of a closed port succeeded", ep)
	}
	if !strings.Contains(err.Error(), ep) {
		t.Errorf("Dial error %q does not name the endpoint %s", err, ep)
	}
}

func TestDialShared(t *testing.T) {
	cli := dialTest(t)
	if _, err := cli.Put(t.Context(), Root+"dial-test", "ok"); err != nil {
		t.Errorf("put through a dialed client: %v", err)
	}
}
