package program

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program/wire"
	"golang.org/x/sys/unix"
)

// DefaultTimeout bounds one request when the spec sets no model.timeout: long
// enough for an interpreter to import numpy and for a large batch, short
// enough that a hung program fails the job within a minute.
const DefaultTimeout = 60 * time.Second

// stderrKeep is how much of the program's stderr an error quotes.
const stderrKeep = 2048

// Config says how to run a program.
type Config struct {
	Argv    []string      // the resolved entry: program and arguments
	Dir     string        // the workspace: the program's working directory
	Timeout time.Duration // per request; 0 means DefaultTimeout
	// Log is where the client logs; with StderrToLog, each line the
	// program writes to stderr too (stderrlog.go).
	Log         *slog.Logger
	StderrToLog bool
	// Pipe offers no shared memory: every tensor goes through the pipe, as
	// for a program written for wire.Version (tests compare the two paths).
	Pipe bool
	// Threads, when > 0, is set as the thread count of the numeric
	// libraries the program may load (blasThreadsEnv).
	Threads int
	// Env is the job spec's env, NAME=VALUE, added to the role's own
	// (checked at submit: jobspec.EnvDenied keeps gtrain's variables).
	Env []string
	// Sandbox, when set, runs the program in it (package
	// internal/sandbox): its uid, cgroup and mount namespace, and of the
	// role's environment only the allow-listed variables. Close closes it,
	// and so does Start when it fails.
	Sandbox *sandbox.Sandbox
}

// blasThreadsEnv are the variables that size the thread pools of OpenBLAS,
// OpenMP and MKL. They must be set before the program loads them: a
// program cannot follow the declare's thread count for them (Debian's
// PyTorch leaves OpenBLAS at every core whatever torch.set_num_threads
// says: measured, its "one thread" MLP ran 15.5k records/s on two cores and
// 8.8k on one).
var blasThreadsEnv = []string{"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}

// Client is one running program. Its methods are not safe for concurrent
// use, but for a gradient request sent ahead (GradientProgress with
// Await), which may be called while the one before waits for its answer:
// it is written to the program at once, and read after (exchange.go).
// After any failure every later call returns the same error.
type Client struct {
	cfg     Config
	cmd     *exec.Cmd
	stdin   *os.File // the write end of the program's stdin, a pipe
	stdout  *bufio.Reader
	tail    *stderrTail
	stderr  *stderrLog    // with Config.StderrToLog: tail's writer, logging each line
	exited  chan struct{} // closed when Wait returned
	waitMu  sync.Mutex
	waitErr error
	// pidfd polls readable once the process has exited, which Wait tells
	// only once the program's stderr is copied too: up to WaitDelay later
	// when a process it forked holds that. nil once Wait returned (reaped
	// set), or when the kernel has no pidfd.
	pidfd  *os.File
	reaped bool
	// mu guards broken, and the order and the records' places of the
	// requests in flight (exchange.go).
	mu     sync.Mutex
	broken *Error
	// brokenSet is closed once broken is set: a request queued behind a
	// failed one awaits its failure (call).
	brokenSet chan struct{}
	// writeMu keeps frames written to stdin whole, one after the other:
	// a request, then an arrivals sender's frames (ahead.go).
	writeMu sync.Mutex
	// written and answered are closed once the last request queued wrote
	// its last frame, and was answered (or failed): the next request is
	// written, and its answer read, after (exchange.go, slot).
	written, answered chan struct{}
	// unread is the last request queued's mark that its answer was not
	// read whole, set before answered closes (slot).
	unread *bool
	// failMu makes the first failure the one the client keeps (fail).
	failMu sync.Mutex
	// inFlight are the bytes of the records file the requests not yet
	// answered read, [start, end) each.
	inFlight []*[2]int64
	// cleanup removes an unpacked workspace after the program ended.
	cleanup func()
	// shm is the shared memory offered to the program; shared says the
	// program accepted it (wire.VersionShm) at declare.
	shm    *shm
	shared bool
	// classes is model.outputs when it is > 1 (a classifier): labels then
	// travel as integers.
	classes int
	// tables are the embedding tables the program declared (rows.go).
	tables []jobspec.DeclaredTable
	// progress says the program accepted progress frames (progress.go).
	progress bool
	// overwrite says the program accepted to write its gradients over the
	// grads file's last content (Overwrites).
	overwrite bool
	// ahead says the program accepted requests sent ahead (ahead.go).
	ahead bool
}

// Start runs the program. It does not talk to it yet: Declare is the first
// request.
func Start(cfg Config) (_ *Client, err error) {
	defer func() {
		if err != nil {
			cfg.Sandbox.Close() // the client owns it from here
		}
	}()
	if len(cfg.Argv) == 0 {
		return nil, &Error{Op: "start", Err: fmt.Errorf("%w: empty command", ErrEntry)}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Client{cfg: cfg, tail: newStderrTail(stderrKeep), exited: make(chan struct{}), brokenSet: make(chan struct{}), written: closedChan(), answered: closedChan(), unread: new(bool)}
	var stderr io.Writer = c.tail
	if cfg.StderrToLog {
		c.stderr = newStderrLog(c.tail, cfg.Log, time.Now)
		stderr = c.stderr
	}
	c.offerShm()
	if c.cmd, err = command(cfg, c.shm.childFiles()); err != nil {
		c.shm.close()
		return nil, &Error{Op: "start", Err: err}
	}
	cmd := c.cmd
	cmd.WaitDelay = time.Second
	cmd.Stderr = stderr
	childStdin, stdin, err := os.Pipe() // not cmd.StdinPipe: writeFrame sets write deadlines
	if err != nil {
		c.shm.close()
		return nil, &Error{Op: "start", Err: err}
	}
	c.stdin, cmd.Stdin = stdin, childStdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		childStdin.Close()
		stdin.Close()
		c.shm.close()
		return nil, &Error{Op: "start", Err: err}
	}
	c.stdout = bufio.NewReaderSize(out, 1<<16)
	err = cmd.Start()
	childStdin.Close() // the program's now (or nobody's)
	if err != nil {
		stdin.Close()
		c.shm.close()
		return nil, &Error{Op: "start", Err: fmt.Errorf("%w: %v", ErrEntry, err)}
	}
	if c.shm != nil {
		c.shm.closeChildEnds()
	}
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, 0); err == nil { // before Wait reaps it
		c.pidfd = os.NewFile(uintptr(fd), "program-pidfd")
	}
	go c.wait()
	cfg.Log.Debug("model program started", "argv", cfg.Argv, "dir", cfg.Dir, "pid", cmd.Process.Pid, "sandbox", cfg.Sandbox)
	return c, nil
}

// command is the program's process: in its own process group, so a
// timeout kills what it forked too, dying with its parent, so a SIGKILLed
// trainer leaves no program behind; through the sandbox when there is one.
// files are what it inherits from descriptor 3 on.
func command(cfg Config, files []*os.File) (*exec.Cmd, error) {
	// A workspace may be shared and read-only: no __pycache__ written into it.
	extra := append(slices.Clone(cfg.Env), "PYTHONDONTWRITEBYTECODE=1")
	if cfg.Threads > 0 {
		for _, name := range blasThreadsEnv {
			extra = append(extra, fmt.Sprintf("%s=%d", name, cfg.Threads))
		}
	}
	if cfg.Sandbox != nil {
		return cfg.Sandbox.Command(cfg.Argv, cfg.Dir, os.Environ(), extra, files)
	}
	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(os.Environ(), extra...)
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// offerShm creates the shared memory the program inherits as descriptors
// 3-5 (shm.childFiles), unless the config asks for the pipe. Without memfd_create the pipe
// carries everything: slower, the same answers.
func (c *Client) offerShm() {
	if c.cfg.Pipe {
		return
	}
	s, err := newShm()
	if err != nil {
		c.cfg.Log.Warn("no shared memory for the model program; tensors go through its pipe", "err", err)
		return
	}
	c.shm = s
}

func (c *Client) wait() {
	err := c.cmd.Wait() // returns once stderr is copied (or WaitDelay after the exit)
	if c.stderr != nil {
		c.stderr.close()
	}
	c.waitMu.Lock()
	c.waitErr, c.reaped = err, true
	if c.pidfd != nil {
		c.pidfd.Close()
		c.pidfd = nil
	}
	c.waitMu.Unlock()
	close(c.exited)
}

// processGone says whether the program's process has exited, though Wait
// may not have returned yet.
func (c *Client) processGone() bool {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	if c.reaped || c.pidfd == nil {
		return c.reaped
	}
	fds := []unix.PollFd{{Fd: int32(c.pidfd.Fd()), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// Close ends the program: stdin closes (a well-behaved program exits at
// end of input), and after a short grace the process group is killed.
func (c *Client) Close() error {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		c.kill()
		<-c.exited
	}
	c.cfg.Sandbox.Close()
	if c.cleanup != nil {
		c.cleanup()
	}
	c.shm.close()
	return nil
}

func (c *Client) kill() {
	if p := c.cmd.Process; p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

// call sends one request and reads its answer within the timeout. A
// failure breaks the client for good: the stream may be out of step. x is
// the request's exchange (progress frames, arrivals), nil for none.
//
// want says, from the decoded header, how many floats the answer must carry:
// the payload is read only when the header's "floats" equals it, so that a
// program cannot make the trainer allocate what it claims.
func (c *Client) call(ctx context.Context, req *wire.Request, payload [][]float32, resp *wire.Response, want func() int, x *exchange) ([]float32, error) {
	if err := c.brokenErr(); err != nil {
		return nil, err
	}
	type result struct {
		data []float32
		err  error
	}
	done := make(chan result, 1)
	sl := c.queue()
	arrivals := c.arrivalsSender(req, x, sl)
	// The timeout counts from when the program may compute the request:
	// the one before answered, and a request sent ahead let go or stopped.
	started := make(chan struct{})
	go func() {
		defer close(sl.read) // the next request's answer is read after this one's
		<-sl.prevWritten
		err := c.writeFrame(req.Op, sl.prevRead, req, payload...)
		if arrivals == nil || err != nil {
			close(sl.written)
		} else {
			go arrivals()
		}
		<-sl.prevRead
		if *sl.prevUnread {
			// The stream is out of step: the request before failed, and
			// its failure, not a write or read of this one, is the error.
			// This request's arrivals sender, if any, may still await and
			// write after the call returns: its writes fail on the killed
			// program's pipe, and the trainer ends its awaits (settle).
			*sl.unread = true
			close(started)
			done <- result{err: errBehindFailure}
			return
		}
		if arrivals != nil && err == nil {
			<-sl.written
		}
		close(started)
		if err != nil {
			*sl.unread = true
			if !errors.Is(err, ErrTimeout) {
				err = fmt.Errorf("%w: write request: %v", ErrExited, err)
			}
			done <- result{err: err}
			return
		}
		data, err := c.readAnswer(resp, func() (int, error) {
			w := want()
			if resp.Error != "" || resp.Stopped {
				w = 0 // an error or stopped answer has no payload
			} else if w < 0 {
				return 0, fmt.Errorf("%w: declared shapes %v are not all positive, or over %d values in all", wire.ErrMalformed, resp.Params, MaxParams)
			}
			if resp.Floats != w {
				return 0, fmt.Errorf("%w: the answer announces %d floats, want %d", wire.ErrMalformed, resp.Floats, w)
			}
			return resp.Floats, nil
		}, x)
		// Rule: a request marked unread always breaks the client (fail,
		// or the timeout's and ctx's paths below), which the request
		// behind it awaits. An error answer is read whole, but fails the
		// client too: what the program writes after it is not read on.
		if err != nil || resp.Error != "" {
			*sl.unread = true
		}
		if err != nil {
			err = c.quoteText(err) // before the next request reads on
		}
		done <- result{data, err}
	}()
	// Cancelled: not the program's fault, the role is stopping. No
	// ErrProgram, so nobody fails the job for it.
	cancelled := func() ([]float32, error) {
		c.kill()
		c.setBroken(&Error{Op: req.Op, Err: ctx.Err()})
		return nil, ctx.Err()
	}
	select {
	case <-started:
	case <-ctx.Done():
		return cancelled()
	}
	deadline := time.Now().Add(c.cfg.Timeout)
	timer := time.NewTimer(c.cfg.Timeout)
	defer timer.Stop()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
		if c.processGone() {
			// It died in time: its stdout may stay open up to WaitDelay
			// after, held by a process it forked. A crash, not a timeout.
			r.err = errDiedUnread
			break
		}
		c.kill()
		r.err = fmt.Errorf("%w: %s request took over %s", ErrTimeout, req.Op, c.cfg.Timeout)
	case <-ctx.Done():
		return cancelled()
	}
	if r.err == errBehindFailure {
		select {
		case <-c.brokenSet: // the request before breaks the client (the rule above)
			return nil, c.brokenErr()
		case <-ctx.Done():
			return cancelled()
		}
	}
	if r.err != nil {
		err := c.explain(ctx, r.err, deadline)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return cancelled()
		}
		return nil, c.fail(req.Op, err)
	}
	if resp.Error != "" {
		return nil, c.fail(req.Op, fmt.Errorf("%w: %s", ErrProgramSet, clipText(resp.Error)))
	}
	return r.data, nil
}

// errDiedUnread is a request's whose program died before its deadline
// while its answer's stream stayed open (call).
var errDiedUnread = fmt.Errorf("the program died before answering: %w", io.ErrUnexpectedEOF)

// exitGrace is the least time a program whose stdout closed is given to
// exit (explain).
const exitGrace = 2 * time.Second

// explain turns a broken stream into what happened to the process: an exit
// status says more than "unexpected EOF". A program that died before
// answering (a signal such as the OOM killer's, or an exit) is ErrExited:
// a crash, which the role survives by restarting; a program that wrote
// something wrong is ErrProtocol, which fails the job. One whose stdout
// closed is given until the request's deadline (at least exitGrace) to
// exit: the kernel closes a dying process's descriptors before it can be
// reaped, and freeing what it holds (a GPU's memory, say) may take long.
func (c *Client) explain(ctx context.Context, err error, deadline time.Time) error {
	if errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, wire.ErrMalformed) {
		c.kill()
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	select {
	case <-c.exited:
	case <-time.After(max(time.Until(deadline), exitGrace)):
		c.kill()
		<-c.exited
		return fmt.Errorf("%w: the program closed its stdout but did not exit (%v)", ErrProtocol, err)
	case <-ctx.Done(): // the role is stopping: not the program's fault (call)
		return ctx.Err()
	}
	c.waitMu.Lock()
	werr := c.waitErr
	c.waitMu.Unlock()
	var exit *exec.ExitError
	if errors.As(werr, &exit) && c.cfg.Sandbox.OOMKilled() {
		return fmt.Errorf("%w: %v: the kernel killed it for going past its memory limit (resources.trainer.memory)", ErrExited, exit)
	}
	if errors.As(werr, &exit) {
		return fmt.Errorf("%w: %v", ErrExited, exit)
	}
	return fmt.Errorf("%w: exit status 0 without an answer (%v)", ErrExited, err)
}

// quoteText adds to a wire.TextError what the reader already holds of the
// program's stray output (up to a line), so that the message shows it.
func (c *Client) quoteText(err error) error {
	var te *wire.TextError
	if !errors.As(err, &te) {
		return err
	}
	more, _ := c.stdout.Peek(min(c.stdout.Buffered(), 120))
	if i := bytes.IndexByte(more, '\n'); i >= 0 {
		more = more[:i]
	}
	te.Start = append(te.Start, more...)
	return te
}

func (c *Client) fail(op string, err error) *Error {
	// A request queued behind a failing one meets the program killed: its
	// failure is the first one's, not a crash.
	c.failMu.Lock()
	defer c.failMu.Unlock()
	if b := c.brokenErr(); b != nil {
		return b.(*Error)
	}
	c.kill()
	// Give the stderr copy a moment to take the program's last words.
	select {
	case <-c.exited:
	case <-time.After(time.Second):
	}
	b, first := c.setBroken(&Error{Op: op, Err: err, Stderr: c.tail.String()})
	if first {
		c.cfg.Log.Error("model program failed", "op", op, "err", b)
	}
	return b
}

// Pid is the program's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// protocolError is a well-formed frame with content that breaks the
// protocol (wrong shape, count, non-finite value).
func (c *Client) protocolError(op, format string, args ...any) *Error {
	return c.fail(op, fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...)))
}

func clipText(s string) string {
	const max = 1000
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
