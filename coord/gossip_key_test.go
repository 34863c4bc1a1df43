package coord

import (
	"testing"
	"time"
)

// With SecretKey, members sharing the key form a ring; a member without it
// (or with another key) is not let in.
func TestGossipSecretKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	start := func(name string, k []byte, join ...string) *Gossip {
		t.Helper()
		g, err := StartGossip(GossipConfig{Name: name, Addr: "127.0.0.1:0", Join: join, SecretKey: k})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Stop)
		return g
	}
	a := start("a", key)
	start("b", key, a.Addr())
	start("plain", nil, a.Addr())
	start("other", []byte("fedcba9876543210"), a.Addr())
	if !eventually(5*time.Second, func() bool { return a.Alive()["b"] }) {
		t.Fatalf("b, with the key, did not join: alive %v", a.Alive())
	}
	time.Sleep(time.Second) // room for the others to get in, were they let
	if alive := a.Alive(); alive["plain"] || alive["other"] {
		t.Errorf("a member without the key joined: alive %v", alive)
	}
}
