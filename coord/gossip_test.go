package coord

import (
	"strings"
	"sync"
	"testing"
	"time"
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

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
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

	bothSee := func() bool {
		aa, ba := a.Alive(), b.Alive()
		return aa["node-a"] && aa["node-b"] && ba["node-a"] && ba["node-b"]
	}
	if !eventually(5*time.Second, bothSee) {
		t.Fatalf("members do not see each other: a sees %v, b sees %v", a.Alive(), b.Alive())
	}
	if !eventually(5*time.Second, func() bool { return changesA.has("node-b=alive") }) {
		t.Fatalf("a's OnChange never reported node-b alive; got %s", &changesA)
	}
	if changesA.has("node-b=dead") {
		t.Fatalf("a's OnChange reported node-b dead while it runs: %s", &changesA)
	}

	stopB()
	if !eventually(10*time.Second, func() bool { return changesA.has("node-b=dead") }) {
		t.Fatalf("a's OnChange did not report node-b dead within 10s of its Stop; got %s", &changesA)
	}
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
	if !eventually(5*time.Second, func() bool { return a.Alive()["crash-b"] }) {
		a.Stop()
		b.Stop()
		t.Fatalf("crash-a never saw crash-b: %v", a.Alive())
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
