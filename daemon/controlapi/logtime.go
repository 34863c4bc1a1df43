package controlapi

import (
	"bytes"
	"time"
)

// agentLinePrefix starts the lines the agent itself writes into a worker's
// log (the "starting W (attempt N) at T" header, notices of Logs).
const agentLinePrefix = "=== gtraind: "

// LineTime is when a log line was written: the time= field that slog's text
// handler (cmd/gtraind's role logger) starts every line of a role with, or
// the time at the end of the agent's "=== gtraind: ... at T ===" header.
// Other lines (a panic's stack trace, what a role prints by itself) have no
// time: ok is false.
func LineTime(line []byte) (t time.Time, ok bool) {
	line = bytes.TrimRight(line, "\r\n")
	if rest, found := bytes.CutPrefix(line, []byte("time=")); found {
		if end := bytes.IndexByte(rest, ' '); end >= 0 {
			rest = rest[:end]
		}
		t, err := time.Parse(time.RFC3339Nano, string(rest))
		return t, err == nil
	}
	if rest, found := bytes.CutPrefix(line, []byte(agentLinePrefix)); found {
		rest, found = bytes.CutSuffix(rest, []byte(" ==="))
		i := bytes.LastIndex(rest, []byte(" at "))
		if !found || i < 0 {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, string(rest[i+len(" at "):]))
		return t, err == nil
	}
	return time.Time{}, false
}
