package trainer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// masterConn follows the job's master: when a call fails because the master
// went away, it finds the current leader again and, before retrying, re-sends
// the trainer's latest step reports — a new master has only what its
// predecessor made durable, and a report sent to a dead master is lost.
type masterConn struct {
	t       *trainer
	mu      sync.Mutex
	addr    string
	conn    *grpc.ClientConn
	client  api.MasterClient
	reports []*api.StepDoneRequest // the last two reports (one may lag a step behind)
}

func (m *masterConn) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil {
		m.conn.Close()
	}
}

// connect (re)resolves the leader and dials it if it moved.
func (m *masterConn) connect(ctx context.Context) error {
	addr, err := coord.LeaderValue(ctx, m.t.cli, coord.ElectionPrefix(m.t.cfg.Job))
	if errors.Is(err, coord.ErrNoLeader) {
		return status.Error(codes.Unavailable, err.Error())
	}
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if addr == m.addr && m.conn != nil {
		return nil
	}
	// A trainer built without newTrainer (tests) dials in plaintext.
	conn, err := grpc.NewClient(addr, append(m.t.creds.Options(),
		grpc.WithInitialWindowSize(api.MasterWindow), grpc.WithInitialConnWindowSize(api.MasterWindow))...)
	if err != nil {
		return fmt.Errorf("trainer: master at %s: %w", addr, err)
	}
	if m.conn != nil {
		m.conn.Close()
		m.t.log.Info("master moved; reconnected", "addr", addr)
	}
	m.addr, m.conn, m.client = addr, conn, api.NewMasterClient(conn)
	for _, r := range m.reports {
		// Re-sent reports of steps already committed are ignored by the master.
		_, _ = m.client.StepDone(ctx, r)
	}
	return nil
}

// call runs fn against the current master, reconnecting and retrying while
// the master is unreachable (bounded by the trainer's deadline).
func (m *masterConn) call(ctx context.Context, what string, fn func(api.MasterClient) error) error {
	return m.t.retryTransient(ctx, what, func() error {
		m.mu.Lock()
		c := m.client
		m.mu.Unlock()
		if c == nil {
			if err := m.connect(ctx); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "connected; retry")
		}
		err := fn(c)
		if transient(err) {
			if cerr := m.connect(ctx); cerr != nil {
				return cerr
			}
		}
		return err
	})
}

func (m *masterConn) remember(r *api.StepDoneRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reports = append(m.reports, r)
	if len(m.reports) > 2 {
		m.reports = m.reports[1:]
	}
}

func (m *masterConn) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reports = nil
}
