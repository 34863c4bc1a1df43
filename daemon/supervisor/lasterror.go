package supervisor

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"regexp"
	"strings"
)

const (
	// lastErrorWindow is how much of the end of a worker's log lastErrorLine
	// reads: a crashed role's cause is among its last lines.
	lastErrorWindow = 64 << 10
	// maxLastError bounds the line quoted in a job's reason.
	maxLastError = 400
)

// lastErrorLine is the line of a worker's log that says why its last run
// ended, for the reason of a job failed by a crash loop ("trainer-0 crashed
// 6 times" alone hides the cause in the log). It looks at the last run only
// (after the agent's last "=== gtraind: starting" header) and prefers, from
// the end: the error gtraind prints as it exits ("gtraind: ..."), a Go
// panic, then a log record at level ERROR; an exit error over several lines
// is quoted by its first and last (withLastLine). Empty when none is found
// or the log cannot be read.
func lastErrorLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	start := max(0, info.Size()-lastErrorWindow)
	buf := make([]byte, info.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return ""
	}
	if i := bytes.LastIndex(buf, []byte("=== gtraind: starting ")); i >= 0 {
		buf = buf[i:]
	}
	lines := strings.Split(string(buf), "\n")
	for _, match := range []func(string) bool{
		func(l string) bool { return strings.HasPrefix(l, "gtraind: ") },
		func(l string) bool { return strings.HasPrefix(l, "panic: ") },
		func(l string) bool { return strings.Contains(l, "level=ERROR") },
	} {
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); match(l) {
				if strings.HasPrefix(l, "gtraind: ") {
					return withLastLine(l, lines[i+1:])
				}
				return clip(l, maxLastError)
			}
		}
	}
	return ""
}

// withLastLine is the exit error's first line and, when the error goes on
// over more lines, the one that names the exception (the last such), else
// its last: a model program's stderr tail ends the error, and a Python
// traceback's exception comes at its end (a warning may follow), which its
// first line ("Traceback (most recent call last):") does not say. The
// error's lines are those up to the next record of the role's own log
// (roleRecord) or agent header: a Go program's own slog records, quoted in
// the error from its stderr, are the error's lines.
func withLastLine(first string, rest []string) string {
	last, exception := "", ""
	for _, l := range rest {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "=== gtraind: ") || roleRecord.MatchString(l) {
			break
		}
		if l != "" {
			last = l
		}
		if exceptionLine.MatchString(l) {
			exception = l
		}
	}
	last = cmp.Or(exception, last)
	if last == "" {
		return clip(first, maxLastError)
	}
	last = clip(last, maxLastError/2)
	return clip(first, maxLastError-len(last)-5) + " ... " + last
}

// roleRecord is a record of a role's own log: cmd/gtraind's roleLogger
// names the role in every one (after the message, as slog's text handler
// writes attributes), which a program's records do not.
var roleRecord = regexp.MustCompile(`^time=\S+ level=\S+ .* role=(master|pserver|trainer) job=`)

// exceptionLine is how a Python exception's line starts ("ValueError: ...",
// "torch.OutOfMemoryError: ...", "KeyboardInterrupt").
var exceptionLine = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b`)

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
