package supervisor

import (
	"bytes"
	"io"
	"os"
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
// panic, then a log record at level ERROR. Empty when none is found or the
// log cannot be read.
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
				return clip(l, maxLastError)
			}
		}
	}
	return ""
}

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
