package coord

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// GossipConfig configures the agent's membership in the gossip ring.
type GossipConfig struct {
	Name string
	Addr string // host:port to bind; port 0 picks a free one
	// Advertise is the IP published to peers when Addr binds a wildcard;
	// "" publishes Addr's host.
	Advertise string
	Join      []string // host:port of peers already in the ring
	Log       *slog.Logger
	// OnChange is called when a member joins (alive=true) or is declared dead.
	OnChange func(name string, alive bool)
	// SecretKey (16, 24 or 32 bytes: AES-128/192/256) encrypts and
	// authenticates every gossip message; members without it are not heard.
	// nil is plaintext.
	SecretKey []byte
}

// Validate names the bad field.
func (c GossipConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("gossip: Name must be set")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("gossip: Addr %q: %w", c.Addr, err)
	}
	return nil
}

// Gossip is this node's membership in the ring (hashicorp/memberlist). It
// detects dead peers in seconds, long before an etcd lease would.
type Gossip struct {
	ml      *memberlist.Memberlist
	mu      sync.Mutex
	stopped bool
}

// StartGossip joins (or starts) the ring.
func StartGossip(c GossipConfig) (*Gossip, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	host, portStr, _ := net.SplitHostPort(c.Addr)
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("gossip: port %q: %w", portStr, err)
	}
	mc := memberlist.DefaultLANConfig()
	mc.Name = c.Name
	mc.BindAddr = host
	mc.BindPort = port
	mc.AdvertiseAddr = host
	if c.Advertise != "" {
		mc.AdvertiseAddr = c.Advertise
	}
	mc.AdvertisePort = port
	mc.Logger = log.New(io.Discard, "", 0)
	// A node that died and comes back under its name but on another address
	// (a restarted agent on port 0) is a fresh member at once, instead of a
	// conflict ignored until the dead one is forgotten (30 s later).
	mc.DeadNodeReclaimTime = time.Second
	mc.SecretKey = c.SecretKey // memberlist then verifies incoming and encrypts outgoing
	if c.OnChange != nil {
		mc.Events = &gossipEvents{onChange: c.OnChange}
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("gossip: listen on %s: %w", c.Addr, err)
	}
	if len(c.Join) > 0 {
		if _, err := ml.Join(c.Join); err != nil && c.Log != nil {
			// Peers may not be up yet; they will join us. Not fatal.
			c.Log.Warn("gossip: join failed; waiting for peers to join us", "peers", c.Join, "err", err)
		}
	}
	return &Gossip{ml: ml}, nil
}

// Addr is the bound host:port.
func (g *Gossip) Addr() string {
	n := g.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Alive returns the names of the members currently considered alive.
func (g *Gossip) Alive() map[string]bool {
	out := map[string]bool{}
	for _, m := range g.ml.Members() {
		out[m.Name] = true
	}
	return out
}

// Stop leaves the ring gracefully and shuts down.
func (g *Gossip) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return // memberlist panics on a second Leave
	}
	g.stopped = true
	_ = g.ml.Leave(0)
	_ = g.ml.Shutdown()
}

type gossipEvents struct{ onChange func(string, bool) }

func (e *gossipEvents) NotifyJoin(n *memberlist.Node)   { e.onChange(n.Name, true) }
func (e *gossipEvents) NotifyLeave(n *memberlist.Node)  { e.onChange(n.Name, false) }
func (e *gossipEvents) NotifyUpdate(n *memberlist.Node) {}
