package pserver

import (
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/rolecfg"
)

// Config configures the `gtraind pserver` process.
type Config struct {
	// Common is the job, node, job revision, session TTL (the registration
	// dies this long after the process), log and metrics; its TLS is the
	// node certificate the pserver serves with.
	rolecfg.Common
	Index      int
	DataDir    string        // the agent's data dir; checkpoints default to jobdir.Checkpoints under it
	ListenAddr string        // host:port; port 0 picks a free one
	ClaimWait  time.Duration // how long to wait for a live previous holder's lease to expire
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
	return Config{Common: rolecfg.Common{SessionTTL: rolecfg.DefaultSessionTTL}, ListenAddr: "127.0.0.1:0", ClaimWait: 60 * time.Second}
}

// Validate names the bad field.
func (c Config) Validate() error {
	if err := c.Common.Validate("pserver"); err != nil {
		return err
	}
	switch {
	case c.Index < 0:
		return fmt.Errorf("pserver: Index must be >= 0, got %d", c.Index)
	case c.DataDir == "":
		return errors.New("pserver: DataDir must be set")
	case c.ClaimWait <= 0:
		return fmt.Errorf("pserver: ClaimWait must be > 0, got %s", c.ClaimWait)
	}
	return nil
}
