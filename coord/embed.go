package coord

import (
	"fmt"
	"log/slog"

	"github.com/gtrain/gtrain/internal/embedetcd"
)

// EmbeddedConfig configures the single-member etcd of `gtraind agent --dev`.
type EmbeddedConfig struct {
	Dir        string // data dir of the member
	ClientAddr string // host:port for clients, e.g. 127.0.0.1:2379
	PeerAddr   string // host:port for peers, e.g. 127.0.0.1:2380
	Name       string
}

// Validate names the bad field.
func (c EmbeddedConfig) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("embedded etcd: Dir must be set")
	case c.ClientAddr == "":
		return fmt.Errorf("embedded etcd: ClientAddr must be set")
	case c.PeerAddr == "":
		return fmt.Errorf("embedded etcd: PeerAddr must be set")
	}
	return nil
}

// Embedded is a running single-member etcd.
type Embedded struct {
	member *embedetcd.Member
	// Endpoint is the client URL to dial.
	Endpoint string
}

// StartEmbedded starts a single-member etcd and waits until it serves. Its
// own log goes to a file beside its data dir.
func StartEmbedded(c EmbeddedConfig, log *slog.Logger) (*Embedded, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m, err := embedetcd.Start(embedetcd.Config{Dir: c.Dir, ClientAddr: c.ClientAddr, PeerAddr: c.PeerAddr, Name: c.Name})
	if err != nil {
		return nil, err
	}
	if log != nil {
		log.Info("embedded etcd ready", "dir", c.Dir, "client", c.ClientAddr)
	}
	return &Embedded{member: m, Endpoint: m.Endpoint}, nil
}

// Close stops the member.
func (e *Embedded) Close() { e.member.Close() }

// Err reports a fatal etcd server error.
func (e *Embedded) Err() <-chan error { return e.member.Err() }
