package coord

import (
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/wait"
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
	wait.Eventually(t, 5*time.Second, "b, with the key, to join", func() (bool, string) {
		alive := a.Alive()
		return alive["b"], fmt.Sprint(alive)
	})
	time.Sleep(time.Second) // room for the others to get in, were they let
	if alive := a.Alive(); alive["plain"] || alive["other"] {
		t.Errorf("a member without the key joined: alive %v", alive)
	}
}
