package program

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
)

// logLines is a log written as JSON lines.
type logLines struct{ logcheck.Buffer }

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

func (l *logLines) records(t *testing.T) []map[string]any { return l.Records(t) }

// stderrLines is the "line" of every "program stderr" record.
func (l *logLines) stderrLines(t *testing.T) []string {
	var out []string
	for _, r := range l.records(t) {
		if r["msg"] == "program stderr" {
			out = append(out, r["line"].(string))
		}
	}
	return out
}

func TestStderrLogLines(t *testing.T) {
	var out logLines
	tail := newStderrTail(64)
	s := newStderrLog(tail, out.logger(), time.Now)
	long := strings.Repeat("x", stderrLineMax+10)
	for _, w := range []string{"Epoch 1 lo", "ss 0.5\nwarn", "ing: slow\n\n", "10%|#\r20%|##\r", long + "\n", "no newline"} {
		if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	s.close()
	want := []string{"Epoch 1 loss 0.5", "warning: slow", "10%|#", "20%|##", long[:stderrLineMax], "no newline"}
	got := out.stderrLines(t)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("logged lines\n%q\nwant\n%q", got, want)
	}
	for _, r := range out.records(t) {
		if r["line"] == long[:stderrLineMax] && r["cut_bytes"] != float64(10) {
			t.Errorf("the cut line says cut_bytes %v, want 10", r["cut_bytes"])
		}
	}
	if !strings.HasSuffix(tail.String(), "no newline") {
		t.Errorf("the tail lost the output: %q", tail.String())
	}
}

// TestStderrLogCutsAtACharacter: a line cut at stderrLineMax is not cut
// inside a UTF-8 character.
func TestStderrLogCutsAtACharacter(t *testing.T) {
	var out logLines
	s := newStderrLog(newStderrTail(64), out.logger(), time.Now)
	s.Write([]byte(strings.Repeat("a", stderrLineMax-1) + "ébc\n"))
	recs := out.records(t)
	if len(recs) != 1 || recs[0]["line"] != strings.Repeat("a", stderrLineMax-1) || recs[0]["cut_bytes"] != float64(4) {
		t.Fatalf("logged %v, want %d a's and cut_bytes 4", recs, stderrLineMax-1)
	}
}

// warnings returns the "lines" of each warning of lines not logged, and
// the count of lines logged.
func (l *logLines) warnings(t *testing.T) (skipped []float64, logged int) {
	for _, r := range l.records(t) {
		switch {
		case r["msg"] == "program stderr":
			logged++
		case strings.HasPrefix(r["msg"].(string), "program stderr: lines not logged"):
			skipped = append(skipped, r["lines"].(float64))
		}
	}
	return skipped, logged
}

// TestStderrLogRate checks a program printing in a loop: the burst is
// logged, then a line per 1/stderrLineRate s; the lines left out are
// counted in a warning when the limit starts, at most every
// stderrWarnEvery after, and at the end.
func TestStderrLogRate(t *testing.T) {
	var out logLines
	now := time.Unix(1000, 0)
	s := newStderrLog(newStderrTail(64), out.logger(), func() time.Time { return now })
	spam := func(n int, line string) {
		for range n {
			s.Write([]byte(line + "\n"))
		}
	}
	spam(stderrLineBurst+5, "spam")
	now = now.Add(time.Second / stderrLineRate)
	spam(1, "after a pause")
	spam(1, "spam again")
	if skipped, logged := out.warnings(t); logged != stderrLineBurst+1 || len(skipped) != 1 || skipped[0] != 1 {
		t.Fatalf("after a burst and a pause: %d lines logged, warnings %v; want %d, [1] (one when the limit started)",
			logged, skipped, stderrLineBurst+1)
	}
	now = now.Add(stderrWarnEvery + time.Second)
	spam(stderrLineBurst+1, "more")
	spam(2, "still more")
	s.close()
	skipped, logged := out.warnings(t)
	if logged != 2*stderrLineBurst+1 || len(skipped) != 3 || skipped[1] != 6 || skipped[2] != 2 {
		t.Fatalf("%d lines logged, warnings %v; want %d, [1 6 2]", logged, skipped, 2*stderrLineBurst+1)
	}
	if got := out.records(t)[stderrLineBurst+1]["line"]; got != "after a pause" {
		t.Fatalf("logged %v after the pause", got)
	}
}

// TestStderrLogBudget: once a program's lines reach stderrLogBudget, no
// more are logged, whatever the rate, and the warning says why.
func TestStderrLogBudget(t *testing.T) {
	var out logLines
	now := time.Unix(1000, 0)
	s := newStderrLog(newStderrTail(64), out.logger(), func() time.Time { return now })
	s.logged = stderrLogBudget - 10
	s.Write([]byte("fits\nover budget\n"))
	now = now.Add(time.Hour)
	s.Write([]byte("x\n"))
	s.close()
	recs := out.records(t)
	if len(recs) != 3 || recs[0]["line"] != "fits" || !strings.Contains(recs[1]["msg"].(string), "16 MiB logged already") ||
		recs[1]["lines"] != float64(1) || recs[2]["lines"] != float64(1) {
		t.Fatalf("logged %v; want fits, then a warning of the budget for each line left out", recs)
	}
}

// TestProgramStderrLogged runs a real program that prints to stderr and
// then fails: its lines are in the role's log as they came, besides the
// tail in the error.
func TestProgramStderrLogged(t *testing.T) {
	var out logLines
	c := startEntry(t, "program/testdata", []string{python, "bad.py", "error"},
		Config{Timeout: 5 * time.Second, Log: out.logger(), StderrToLog: true})
	ctx := context.Background()
	d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Gradient(ctx, d.Params, d.Init, smallBatch(), [][]float32{make([]float32, 6), make([]float32, 3)})
	if err == nil {
		t.Fatal("bad.py error answered a gradient")
	}
	c.Close()
	lines := out.stderrLines(t)
	if len(lines) != 1 || lines[0] != "bad.py: error on gradient of 2 records" {
		t.Fatalf("the log has the program's stderr lines %q, want the one it printed", lines)
	}
}

// TestStderrLoggedForRolesNotAtSubmit: a role's program's stderr is in the
// role's log; the declare at submit logs none (its logger is the agent's,
// and the refusal quotes the tail).
func TestStderrLoggedForRolesNotAtSubmit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*slog.Logger) error
		want  []string
	}{
		{"submit", func(log *slog.Logger) error {
			return DeclareForSubmit(t.Context(), programSpec(t, "declare-exit"), nil, sandbox.Policy{}, log)
		}, nil},
		{"role", func(log *slog.Logger) error {
			_, _, err := StartForJob(t.Context(), programSpec(t, "declare-exit"), 0, nil, sandbox.Policy{}, log)
			return err
		}, []string{"cannot import torch"}},
	} {
		var out logLines
		err := tc.start(out.logger())
		if err == nil || !strings.Contains(err.Error(), "cannot import torch") {
			t.Fatalf("%s: %v, want the failed declare quoting its stderr", tc.name, err)
		}
		if got := out.stderrLines(t); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: stderr lines logged %q, want %q", tc.name, got, tc.want)
		}
	}
}
