package coord

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/wait"
)

// changeLog collects OnChange calls, which memberlist makes from its own goroutines.
type changeLog struct {
	mu     sync.Mutex
	events []string
}

func (c *changeLog) record(name string, alive bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	state := "dead"
	if alive {
		state = "alive"
	}
	c.events = append(c.events, name+"="+state)
}

func (c *changeLog) has(event string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		if e == event {
			return true
		}
	}
	return false
}

func (c *changeLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, ",")
}

func TestGossipJoinAndLeave(t *testing.T) {
	var changesA changeLog
	a, err := StartGossip(GossipConfig{Name: "node-a", Addr: "127.0.0.1:0", OnChange: changesA.record})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	if strings.HasSuffix(a.Addr(), ":0") || !strings.HasPrefix(a.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want 127.0.0.1 and the port actually bound", a.Addr())
	}

	b, err := StartGossip(GossipConfig{Name: "node-b", Addr: "127.0.0.1:0", Join: []string{a.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	stopB := sync.OnceFunc(b.Stop)
	t.Cleanup(stopB)
	if a.Addr() == b.Addr() {
		t.Fatalf("both members bound %s", a.Addr())
	}

	wait.Eventually(t, 5*time.Second, "the members to see each other", func() (bool, string) {
		aa, ba := a.Alive(), b.Alive()
		return aa["node-a"] && aa["node-b"] && ba["node-a"] && ba["node-b"], fmt.Sprintf("a sees %v, b sees %v", aa, ba)
	})
	wait.Eventually(t, 5*time.Second, "a's OnChange to report node-b alive", func() (bool, string) {
		return changesA.has("node-b=alive"), changesA.String()
	})
	if changesA.has("node-b=dead") {
		t.Fatalf("a's OnChange reported node-b dead while it runs: %s", &changesA)
	}

	stopB()
	wait.Eventually(t, 10*time.Second, "a's OnChange to report node-b dead after its Stop", func() (bool, string) {
		return changesA.has("node-b=dead"), changesA.String()
	})
	if a.Alive()["node-b"] {
		t.Errorf("a still lists node-b alive after it left: %v", a.Alive())
	}
	if !a.Alive()["node-a"] {
		t.Errorf("a does not list itself alive: %v", a.Alive())
	}
}

func TestGossipJoinUnreachablePeerIsNotFatal(t *testing.T) {
	addr, err := freeLocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	g, err := StartGossip(GossipConfig{Name: "lonely", Addr: "127.0.0.1:0", Join: []string{addr}})
	if err != nil {
		t.Fatalf("StartGossip with an unreachable peer: %v", err)
	}
	defer g.Stop()
	if got := g.Alive(); len(got) != 1 || !got["lonely"] {
		t.Errorf("Alive() = %v, want only itself", got)
	}
}

func TestGossipValidate(t *testing.T) {
	cases := []struct {
		cfg   GossipConfig
		field string
	}{
		{GossipConfig{Addr: "127.0.0.1:0"}, "Name"},
		{GossipConfig{Name: "n", Addr: ""}, "Addr"},
		{GossipConfig{Name: "n", Addr: "no-port"}, "Addr"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.cfg, err, c.field)
		}
		if _, err := StartGossip(c.cfg); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("StartGossip(%+v) = %v, want an error naming %s", c.cfg, err, c.field)
		}
	}
	if err := (GossipConfig{Name: "n", Addr: "127.0.0.1:7946"}).Validate(); err != nil {
		t.Errorf("Validate of a good config: %v", err)
	}
}

func TestGossipBadPort(t *testing.T) {
	_, err := StartGossip(GossipConfig{Name: "n", Addr: "127.0.0.1:http-ish"})
	if err == nil || !strings.Contains(err.Error(), "http-ish") {
		t.Errorf("StartGossip with a named port: err = %v, want an error naming the port", err)
	}
}

// Stop must return even when the only peer crashed without leaving: Leave
// waits for its broadcast to go out to a member it still believes alive.
func TestGossipStopAfterPeerCrashReturns(t *testing.T) {
	a, err := StartGossip(GossipConfig{Name: "crash-a", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := StartGossip(GossipConfig{Name: "crash-b", Addr: "127.0.0.1:0", Join: []string{a.Addr()}})
	if err != nil {
		a.Stop()
		t.Fatal(err)
	}
	if err := wait.Until(5*time.Second, "crash-a to see crash-b", func() (bool, string) {
		alive := a.Alive()
		return alive["crash-b"], fmt.Sprint(alive)
	}); err != nil {
		a.Stop()
		b.Stop()
		t.Fatal(err)
	}
	_ = b.ml.Shutdown() // a crash: no leave message
	stopped := make(chan struct{})
	go func() { a.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop blocked for 5s after the only peer crashed")
	}
}

// Stop is a closer: an agent's shutdown path may run it more than once.
func TestGossipStopTwice(t *testing.T) {
	g, err := StartGossip(GossipConfig{Name: "twice", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("second Stop panicked: %v", r)
		}
	}()
	g.Stop()
}
