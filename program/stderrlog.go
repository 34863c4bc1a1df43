package program

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"
)

// What of a program's stderr goes to its role's log. The worker's log is a
// plain file on the node's disk that nothing rotates (daemon/supervisor),
// so a program printing in a loop must not fill it: past a burst, lines are
// logged at a steady rate, and once a program's lines reach a budget, none
// is; the rest are counted. A line is cut at a length that holds a Python
// traceback's longest lines.
const (
	stderrLineMax   = 1024     // bytes of one logged line
	stderrLineRate  = 20       // lines a second, past the burst
	stderrLineBurst = 200      // lines logged at once: a traceback, a startup banner
	stderrLogBudget = 16 << 20 // bytes of lines logged in a program's life
	stderrWarnEvery = 10 * time.Second
)

// stderrLog is a program's stderr: each line goes to the role's log (so
// `gctl job logs -w trainer-0` shows a program's prints and warnings as
// they come), within stderrLineRate and stderrLogBudget, and its tail is
// kept for the error that quotes it (stderrTail). A carriage return ends a
// line too: progress bars redraw with it.
type stderrLog struct {
	tail *stderrTail
	log  *slog.Logger
	now  func() time.Time

	mu       sync.Mutex
	lim      *rate.Limiter
	line     []byte    // the line so far (at most stderrLineMax bytes)
	cut      int       // bytes of it beyond stderrLineMax, dropped
	logged   int       // bytes of lines logged so far
	spent    bool      // a line went over stderrLogBudget: no more are logged
	skipped  int       // lines not logged since the last warning
	warnedAt time.Time // the last warning of lines not logged
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

// add appends b to the line, up to stderrLineMax and not inside a UTF-8
// character; past that, b only counts as cut.
func (s *stderrLog) add(b []byte) {
	if s.cut == 0 {
		keep := min(len(b), stderrLineMax-len(s.line))
		for keep < len(b) && keep > 0 && !utf8.RuneStart(b[keep]) {
			keep--
		}
		s.line = append(s.line, b[:keep]...)
		b = b[keep:]
	}
	s.cut += len(b)
}

// emit logs the line, if it has anything and the rate and budget allow, and
// starts the next.
func (s *stderrLog) emit() {
	line := strings.ToValidUTF8(strings.TrimRight(string(s.line), " \t"), "?")
	cut := s.cut
	s.line, s.cut = s.line[:0], 0
	if line == "" {
		return
	}
	now := s.now()
	s.spent = s.spent || s.logged+len(line) > stderrLogBudget
	if s.spent || !s.lim.AllowN(now, 1) {
		s.skipped++
		if s.warnedAt.IsZero() || now.Sub(s.warnedAt) >= stderrWarnEvery {
			s.warnSkipped(now)
		}
		return
	}
	s.logged += len(line)
	if cut > 0 {
		s.log.Info("program stderr", "line", line, "cut_bytes", cut)
		return
	}
	s.log.Info("program stderr", "line", line)
}

// warnSkipped says how many lines were not logged since the last warning,
// and why.
func (s *stderrLog) warnSkipped(now time.Time) {
	why := fmt.Sprintf("over %d lines a second", stderrLineRate)
	if s.spent {
		why = fmt.Sprintf("its %d MiB logged already", stderrLogBudget>>20)
	}
	s.log.Warn(fmt.Sprintf("program stderr: lines not logged, %s (the last %d KiB are kept for errors)", why, stderrKeep>>10),
		"lines", s.skipped)
	s.skipped, s.warnedAt = 0, now
}

// close logs a last line without its newline, and the count of lines not
// logged since the last warning: the program has exited.
func (s *stderrLog) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit()
	if s.skipped > 0 {
		s.warnSkipped(s.now())
	}
}
