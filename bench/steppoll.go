package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobauth"
	"google.golang.org/grpc"
)

// stepPoller reads the step a job's pserver applied, straight from it: the
// master saves its step commits in the background (a few times a second),
// so its records are too coarse to time steps of a millisecond.
type stepPoller struct {
	conn  *grpc.ClientConn
	ps    api.PServerClient
	ended func() error // the job's end, once it ended (measurer.ended)
}

// errNoPserver: the job's pserver has not announced itself ready yet.
var errNoPserver = errors.New("pserver not ready")

// newStepPoller dials the job's pserver index once it is ready (a dev
// agent serves without TLS), with the job's credential, which the pserver
// asks of every caller.
func (m *measurer) newStepPoller(index int, timeout time.Duration) (*stepPoller, error) {
	deadline := time.Now().Add(timeout)
	ended := everySecond(m.ended)
	for {
		var rec schema.PserverRecord
		_, err := coord.GetJSON(context.Background(), m.cli, coord.PserverKey(m.job, index), &rec)
		if err == nil && !rec.Ready {
			err = fmt.Errorf("%w: pserver %d", errNoPserver, index)
		}
		var dial jobauth.Dial
		if err == nil {
			dial, err = m.jobDial()
		}
		if err == nil {
			conn, err := grpc.NewClient(rec.Addr, dial.Options()...)
			if err != nil {
				return nil, err
			}
			return &stepPoller{conn: conn, ps: api.NewPServerClient(conn), ended: m.ended}, nil
		}
		if err := ended(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench %s: %w after %s", m.job, err, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jobDial is a plaintext dial with the job's credential, read from etcd
// (the agent stores it before it starts the job's first role).
func (m *measurer) jobDial() (jobauth.Dial, error) {
	ctx := context.Background()
	_, rev, err := coord.GetJobRecord(ctx, m.cli, m.job)
	if err != nil {
		return jobauth.Dial{}, err
	}
	secret, _, err := coord.GetJobSecret(ctx, m.cli, m.job, rev)
	if err == nil && secret == nil {
		err = fmt.Errorf("%w: job %s has no secret yet", errNoPserver, m.job)
	}
	if err != nil {
		return jobauth.Dial{}, err
	}
	return jobauth.Dial{Job: jobauth.PerRPC(m.job, secret)}, nil
}

func (p *stepPoller) close() { p.conn.Close() }

// everySecond is ended called at most once a second (nil between, and
// when ended is nil): the waits poll far more often than a job ends.
func everySecond(ended func() error) func() error {
	var last time.Time
	return func() error {
		if ended == nil || time.Since(last) < time.Second {
			return nil
		}
		last = time.Now()
		return ended()
	}
}

// ended says how the job ended, once it did (nil while it runs): a job
// that failed is reported at once with its reason, not after a wait for
// steps that will never come.
func (m *measurer) ended() error {
	st, err := coord.JobState(context.Background(), m.cli, m.job)
	if err != nil || !api.Terminal(st.State) {
		return nil // unknown yet: the caller's timeout still bounds the wait
	}
	return fmt.Errorf("bench: job %s ended %s: %s", m.job, st.State, st.Reason)
}

// polled is what one poll of the pserver read, and when.
type polled struct {
	step, epoch int64
	at          time.Time
}

// waitStep polls the pserver every poll until it applied at least step
// steps, and returns what it read then.
func (p *stepPoller) waitStep(timeout, poll time.Duration, step int64) (polled, error) {
	return p.waitFor(timeout, poll, fmt.Sprintf("step %d", step), func(r polled) bool { return r.step >= step })
}

// read asks the pserver once.
func (p *stepPoller) read() (polled, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r, err := p.ps.Info(ctx, &api.InfoRequest{})
	if err != nil {
		return polled{}, err
	}
	return polled{step: r.Step, epoch: r.Epoch, at: time.Now()}, nil
}

// waitFor polls the pserver every poll until what it read meets cond, and
// returns that read.
func (p *stepPoller) waitFor(timeout, poll time.Duration, what string, cond func(polled) bool) (polled, error) {
	deadline := time.Now().Add(timeout)
	var last polled
	ended := everySecond(p.ended)
	for time.Now().Before(deadline) {
		if r, err := p.read(); err == nil {
			if last = r; cond(r) {
				return r, nil
			}
		}
		if err := ended(); err != nil {
			return last, err
		}
		time.Sleep(poll)
	}
	return last, fmt.Errorf("bench: pserver at step %d (epoch %d), not %s, after %s", last.step, last.epoch, what, timeout)
}
