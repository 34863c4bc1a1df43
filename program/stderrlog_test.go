package program

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// TestStderrLogRate checks a program printing in a loop: the burst is
// logged, then a line per 1/stderrLineRate s, and the lines skipped are
// counted in a warning before the next line logged and at the end.
func TestStderrLogRate(t *testing.T) {
	var out logLines
	now := time.Unix(1000, 0)
	s := newStderrLog(newStderrTail(64), out.logger(), func() time.Time { return now })
	for range stderrLineBurst + 5 {
		s.Write([]byte("spam\n"))
	}
	if got := len(out.stderrLines(t)); got != stderrLineBurst {
		t.Fatalf("logged %d lines at once, want the burst %d", got, stderrLineBurst)
	}
	now = now.Add(time.Second / stderrLineRate)
	s.Write([]byte("after a pause\n"))
	s.Write([]byte("spam again\n"))
	s.close()
	recs := out.records(t)
	var tailMsgs []string
	var skippedCounts []float64
	for _, r := range recs[stderrLineBurst:] {
		tailMsgs = append(tailMsgs, r["msg"].(string))
		if n, ok := r["lines"].(float64); ok {
			skippedCounts = append(skippedCounts, n)
		}
	}
	skipMsg := "program stderr: lines not logged, over the rate limit (the last 2 KiB are kept for errors)"
	want := []string{skipMsg, "program stderr", skipMsg}
	if strings.Join(tailMsgs, "|") != strings.Join(want, "|") {
		t.Fatalf("after the burst the log says %q, want %q", tailMsgs, want)
	}
	if len(skippedCounts) != 2 || skippedCounts[0] != 5 || skippedCounts[1] != 1 {
		t.Fatalf("skipped counts %v, want [5 1]", skippedCounts)
	}
	if got := recs[stderrLineBurst+1]["line"]; got != "after a pause" {
		t.Fatalf("logged %v after the pause", got)
	}
}

// TestProgramStderrLogged runs a real program that prints to stderr and
// then fails: its lines are in the role's log as they came, besides the
// tail in the error.
func TestProgramStderrLogged(t *testing.T) {
	var out logLines
	c := startEntry(t, "program/testdata", []string{python, "bad.py", "error"}, Config{Timeout: 5 * time.Second, Log: out.logger()})
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
