package program

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// What of a program's stderr goes to its role's log. The worker's log is a
// plain file on the node's disk (daemon/supervisor), so a program printing
// in a loop must not fill it: past a burst, lines are logged at a steady
// rate and the rest counted, and a line is cut at a length that holds a
// Python traceback's longest lines.
const (
	stderrLineMax   = 1024 // bytes of one logged line
	stderrLineRate  = 20   // lines a second, past the burst
	stderrLineBurst = 200  // lines logged at once: a traceback, a startup banner
)

// stderrLog is a program's stderr: each line goes to the role's log (so
// `gctl job logs -w trainer-0` shows a program's prints and warnings as
// they come), within stderrLineRate, and its tail is kept for the error
// that quotes it (stderrTail). A carriage return ends a line too: progress
// bars redraw with it.
type stderrLog struct {
	tail *stderrTail
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex
	lim     *rate.Limiter
	line    []byte // the line so far (at most stderrLineMax bytes)
	cut     int    // bytes of it beyond stderrLineMax, dropped
	skipped int    // lines not logged, over the rate, since the last logged
}

func newStderrLog(tail *stderrTail, log *slog.Logger, now func() time.Time) *stderrLog {
	return &stderrLog{tail: tail, log: log, now: now, lim: rate.NewLimiter(stderrLineRate, stderrLineBurst)}
}

func (s *stderrLog) Write(p []byte) (int, error) {
	n := len(p)
	s.tail.Write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.add(p)
			break
		}
		s.add(p[:i])
		s.emit()
		p = p[i+1:]
	}
	return n, nil
}

// add appends b to the line, within stderrLineMax.
func (s *stderrLog) add(b []byte) {
	keep := min(len(b), stderrLineMax-len(s.line))
	s.line = append(s.line, b[:keep]...)
	s.cut += len(b) - keep
}

// emit logs the line, if it has anything and the rate allows, and starts
// the next.
func (s *stderrLog) emit() {
	line := strings.ToValidUTF8(strings.TrimRight(string(s.line), " \t"), "?")
	cut := s.cut
	s.line, s.cut = s.line[:0], 0
	if line == "" {
		return
	}
	if !s.lim.AllowN(s.now(), 1) {
		s.skipped++
		return
	}
	s.flushSkipped()
	if cut > 0 {
		s.log.Info("program stderr", "line", line, "cut_bytes", cut)
		return
	}
	s.log.Info("program stderr", "line", line)
}

// flushSkipped says how many lines were not logged since the last one.
func (s *stderrLog) flushSkipped() {
	if s.skipped > 0 {
		s.log.Warn("program stderr: lines not logged, over the rate limit (the last 2 KiB are kept for errors)",
			"lines", s.skipped, "limit_per_second", stderrLineRate)
		s.skipped = 0
	}
}

// close logs a last line without its newline, and the count of lines not
// logged: the program has exited.
func (s *stderrLog) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit()
	s.flushSkipped()
}
