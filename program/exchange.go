package program

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// exchange is one gradient request's state beside its frames: what its
// progress frames told so far (progress.go) and, for a request sent ahead,
// its arrivals (ahead.go). Each request has its own, since a request sent
// ahead is written while the one before is still read.
type exchange struct {
	tell     *model.Progress // told what the progress frames say
	told     []bool          // each parameter told final
	final    []int           // each parameter's first floats told final (partial)
	freed    []bool          // each parameter told released
	views    [][]float32     // the shared gradients
	await    func(param int) bool
	stopSent atomic.Bool
	goSent   atomic.Bool // told the program to write its gradients
}

// newExchange is the exchange of a gradient request telling p (nil: no
// one listens), or nil when the program accepted no progress frames.
func (c *Client) newExchange(p *model.Progress) *exchange {
	if !c.progress {
		return nil
	}
	if p == nil {
		p = &model.Progress{}
	}
	n := len(c.shm.gradViews)
	return &exchange{tell: p, told: make([]bool, n), final: make([]int, n), freed: make([]bool, n), views: c.shm.gradViews, await: p.Await}
}

// mayWrite says whether the program may write gradients of x's request
// now: any time, but in a request sent ahead, not before its go.
func (x *exchange) mayWrite() bool { return x.await == nil || x.goSent.Load() }

// toldFinal says whether x's progress frames told parameter j final.
func (x *exchange) toldFinal(j int) bool { return x != nil && x.told[j] }

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// slot is a request's place in the stream: it is written once the request
// before it wrote its last frame (its go or stop, when sent ahead: a
// program reads a request's frames before the next request), and its
// answer read once that one's was.
type slot struct {
	prevWritten, prevRead <-chan struct{}
	written, read         chan struct{} // closed once this one's are
	// unread marks that this request's answer was not read whole (the
	// stream is out of step), set before read closes; prevUnread is the
	// one before's.
	prevUnread, unread *bool
}

// errBehindFailure is a request's when the one before it failed: it
// fails with that one's error (call).
var errBehindFailure = errors.New("a request queued behind a failed one")

// queue gives a request its slot, in the order of the calls.
func (c *Client) queue() slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := slot{prevWritten: c.written, prevRead: c.answered, written: make(chan struct{}), read: make(chan struct{}), prevUnread: c.unread, unread: new(bool)}
	c.written, c.answered, c.unread = s.written, s.read, s.unread
	return s
}

// writeFrame writes one frame whole to the program's stdin. A frame may
// wait in the pipe while the program computes the request before (a
// request sent ahead, its arrivals); once that request's answer is read
// (after closed), the program reads on, and the write gets the timeout
// to end: a program that stopped reading its stdin (stuck in a call, a
// deadlock, SIGSTOP) would otherwise hold the role for ever, since the
// answer's timer starts only once the request is written. Past it, the
// program is killed and the client fails with ErrTimeout for op, the
// request the frame belongs to.
func (c *Client) writeFrame(op string, after <-chan struct{}, req *wire.Request, payload ...[]float32) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	done, armed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(armed)
		select {
		case <-after:
			_ = c.stdin.SetWriteDeadline(time.Now().Add(c.cfg.Timeout))
		case <-done:
		}
	}()
	err := wire.WriteFrame(c.stdin, req, payload...)
	close(done)
	<-armed
	_ = c.stdin.SetWriteDeadline(time.Time{}) // the next frame's own
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The client breaks with this error before anything reads the
		// killed program's EOF, which would read as a crash: an arrivals
		// sender's frame has no caller of its own to return it to.
		return c.fail(op, fmt.Errorf("%w: the program read no more of its stdin for %s (a %s frame waits to be written)", ErrTimeout, c.cfg.Timeout, req.Op))
	}
	return err
}

func (c *Client) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		return nil // not a typed nil
	}
	return c.broken
}

// setBroken breaks the client with b unless it is already, and returns
// the error it is broken with, and whether it is b.
func (c *Client) setBroken(b *Error) (*Error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken, false
	}
	c.broken = b
	close(c.brokenSet)
	return b, true
}

// recordsAt is where in the records file a request's need bytes go: at
// the start, unless a request in flight still reads there, and then after
// every such one. Only a request sent ahead is written while another is
// in flight; a program that did not accept them always finds its records
// at the start. done releases the place once the request is answered.
func (c *Client) recordsAt(need int64) (at int64, done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	free := func(a int64) bool {
		return !slices.ContainsFunc(c.inFlight, func(r *[2]int64) bool { return a < r[1] && r[0] < a+need })
	}
	places := []int64{0}
	for _, r := range c.inFlight {
		places = append(places, (r[1]+63)&^63)
	}
	slices.Sort(places)
	at = places[len(places)-1] // after every one: always free
	for _, a := range places {
		if free(a) {
			at = a
			break
		}
	}
	region := &[2]int64{at, at + need}
	c.inFlight = append(c.inFlight, region)
	return at, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.inFlight = slices.DeleteFunc(c.inFlight, func(r *[2]int64) bool { return r == region })
	}
}
