package pserver

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/pki"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures the `gtraind pserver` process.
type Config struct {
	Job   string
	Index int
	// JobRev is the create revision of the job record this pserver serves
	// (the agent passes it); the pserver refuses to run for another record.
	// 0 takes the record found.
	JobRev     int64
	Node       string
	DataDir    string        // the agent's data dir; checkpoints default to jobdir.Checkpoints under it
	ListenAddr string        // host:port; port 0 picks a free one
	SessionTTL int           // seconds; the registration dies this long after the process
	ClaimWait  time.Duration // how long to wait for a live previous holder's lease to expire
	// TLS is the node certificate the pserver serves with (mutual TLS); the
	// zero value is plaintext.
	TLS pki.Files
	Log *slog.Logger
	// Metrics is where the process records its metrics (nil: nowhere).
	Metrics prometheus.Registerer
	// Clock is what the process waits and times by (nil: clock.System).
	Clock clock.Clock
	// OwnsRuntime says the pserver is its process's only tenant (`gtraind
	// pserver`): it tunes the Go collector to its shard (see tuneRuntime)
	// and GOMAXPROCS to resources.pserver.cpu.
	// Leave it false where it shares a process, as in tests.
	OwnsRuntime bool
}

// DefaultConfig returns a config with the defaults filled in.
func DefaultConfig() Config {
	return Config{ListenAddr: "127.0.0.1:0", SessionTTL: 5, ClaimWait: 60 * time.Second}
}

// Validate names the bad field.
func (c Config) Validate() error {
	switch {
	case c.Job == "":
		return errors.New("pserver: Job must be set")
	case c.Index < 0:
		return fmt.Errorf("pserver: Index must be >= 0, got %d", c.Index)
	case c.DataDir == "":
		return errors.New("pserver: DataDir must be set")
	case c.SessionTTL < 1:
		return fmt.Errorf("pserver: SessionTTL must be >= 1, got %d", c.SessionTTL)
	case c.ClaimWait <= 0:
		return fmt.Errorf("pserver: ClaimWait must be > 0, got %s", c.ClaimWait)
	}
	return nil
}
