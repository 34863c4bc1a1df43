package client

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// TestTargetOfTakesOnlyAReachableLocalSocket: a pserver's socket is used
// only from its own network host and only while a socket is at its path;
// otherwise its TCP address.
func TestTargetOfTakesOnlyAReachableLocalSocket(t *testing.T) {
	if coord.NetHostID() == "" {
		t.Skip("/proc does not name this network host")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "pserver-0.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	plain := filepath.Join(dir, "file")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	here := coord.NetHostID()
	for _, c := range []struct {
		name, socket, host, want string
	}{
		{"local socket", sock, here, sock},
		{"another network host", sock, here + "x", ""},
		{"no host", sock, "", ""},
		{"gone", filepath.Join(dir, "gone.sock"), here, ""},
		{"not a socket", plain, here, ""},
		{"none", "", here, ""},
	} {
		got := targetOf(schema.PserverRecord{Addr: "10.0.0.1:7000", Socket: c.socket, SocketHost: c.host})
		if got != (Target{Addr: "10.0.0.1:7000", Socket: c.want}) {
			t.Errorf("%s: %+v, want socket %q", c.name, got, c.want)
		}
	}
}
