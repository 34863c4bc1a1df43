package render

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// testHistory is n passes of falling loss (and rising accuracy for a
// classifier).
func testHistory(n int, classifier bool) []api.PassHistory {
	h := make([]api.PassHistory, n)
	for i := range h {
		train, test := 2.0/float64(i+1), 2.2/float64(i+1)+0.05
		h[i] = api.PassHistory{Pass: i, TrainLoss: ptr(train), TestLoss: ptr(test), RecordsPerS: 1000, Seconds: 1}
		if classifier {
			h[i].TestAccuracy = ptr(0.5 + 0.4*float64(i)/float64(n))
		}
	}
	return h
}

func TestFormatSamplesApplied(t *testing.T) {
	same := make([]int64, 300)
	for i := range same {
		same[i] = 404
	}
	differ := append([]int64(nil), same...)
	differ[3], differ[200] = 400, 408
	many := append([]int64(nil), same[:30]...)
	for i := range 15 {
		many[i*2] = int64(500 + i)
	}
	for _, tc := range []struct {
		name    string
		samples []int64
		mode    string
		want    string
	}{
		{"none", nil, "sync", "-"},
		{"all equal sync", same, "sync", "exact, 404 per pass × 300 passes"},
		{"one pass", same[:1], "sync", "exact, 404 per pass × 1 pass"},
		{"all equal async: not called exact", same[:3], "async", "404 per pass × 3 passes"},
		{"some differ", differ, "sync", "404 per pass × 298 of 300 passes; differ: pass 3: 400, pass 200: 408"},
		{"many differ", many, "sync", "404 per pass × 15 of 30 passes; differ: pass 0: 500, pass 2: 501, pass 4: 502, pass 6: 503, pass 8: 504, pass 10: 505, pass 12: 506, pass 14: 507, pass 16: 508, pass 18: 509 … (5 more)"},
	} {
		if got := FormatSamplesApplied(tc.samples, tc.mode); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestETA(t *testing.T) {
	var e ETAEstimator
	t0 := time.Unix(1000, 0)
	st := api.JobStatus{State: api.StateRunning, Pass: 1, Passes: 11, Tasks: api.TaskCounts{Todo: 4}}
	e.Add(t0, st)
	if _, ok := e.eta(st.Passes); ok {
		t.Fatal("an ETA from one poll")
	}
	// One pass in 10 s: 10 passes left, 100 s.
	st.Pass = 2
	e.Add(t0.Add(10*time.Second), st)
	if d, ok := e.eta(st.Passes); !ok || d != 90*time.Second {
		t.Fatalf("eta = %v %v, want 1m30s (9 passes at 10 s each)", d, ok)
	}
	// Half of pass 2 done 5 s later: 8.5 passes left at 0.1 pass/s.
	st.Tasks = api.TaskCounts{Todo: 2, Done: 2}
	e.Add(t0.Add(15*time.Second), st)
	if d, _ := e.eta(st.Passes); d != 85*time.Second {
		t.Errorf("eta = %v, want 1m25s", d)
	}
	// A rollback resets the rate.
	st.Pass, st.Tasks = 1, api.TaskCounts{Todo: 4}
	e.Add(t0.Add(16*time.Second), st)
	if _, ok := e.eta(st.Passes); ok {
		t.Error("an ETA right after a rollback")
	}
	st.History = []api.PassHistory{{Pass: 0, RecordsPerS: 1234.4}}
	if got := e.Suffix(st); got != "  1234 rec/s" {
		t.Errorf("suffix = %q", got)
	}
	for d, want := range map[time.Duration]string{44 * time.Second: "44s", 190 * time.Second: "3m10s", 125 * time.Minute: "2h05m"} {
		if got := formatETA(d); got != want {
			t.Errorf("formatETA(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTextChart(t *testing.T) {
	h := testHistory(5, false)
	loss, acc := Curves(h)
	if len(loss) != 2 || len(acc) != 0 {
		t.Fatalf("curves: %d loss, %d accuracy; want 2, 0", len(loss), len(acc))
	}
	lines := TextChart("fit: loss per pass", h, loss, 20, 6)
	out := strings.Join(lines, "\n")
	t.Log("\n" + out)
	if len(lines) != 1+6+3 {
		t.Fatalf("%d lines, want title, 6 rows, axis, passes, legend", len(lines))
	}
	// The first test loss is the highest value: top row, first column.
	if !strings.HasPrefix(lines[1], "     2.25 |o") {
		t.Errorf("top row %q: want the label 2.25 and the first test loss", lines[1])
	}
	// The last train loss (0.4) is the lowest: bottom row, last column,
	// where the last test loss (0.49) is too.
	if !strings.HasSuffix(lines[6], "#") || len(lines[6]) != 11+20 {
		t.Errorf("bottom row %q: want both last losses in the last column", lines[6])
	}
	if !strings.Contains(lines[9], "* train loss   o test loss") {
		t.Errorf("legend %q", lines[9])
	}
	// Flat and unmeasured curves do not divide by zero.
	flat := []curve{{name: "c", values: []*float64{ptr(1), nil, ptr(1)}}}
	if got := TextChart("flat", h[:3], flat, 10, 5); !strings.Contains(got[3], "*") {
		t.Errorf("a flat curve is not in the middle row:\n%s", strings.Join(got, "\n"))
	}
}

func TestWritePNG(t *testing.T) {
	var b bytes.Buffer
	if err := WritePNG(&b, "mnist", testHistory(30, true)); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// Two charts (loss, accuracy) stacked: twice as high as one.
	if r := img.Bounds(); r.Dx() < 600 || r.Dy() != r.Dx() {
		t.Errorf("image %v: want two 8x4 in charts stacked, 8x8 in", r)
	}
	if dir := os.Getenv("GTRAIN_PLOT_DIR"); dir != "" {
		_ = os.WriteFile(dir+"/mnist.png", b.Bytes(), 0o644)
	}
}

func TestHistoryBrief(t *testing.T) {
	var b bytes.Buffer
	if err := writeHistoryBrief(&b, testHistory(8, true)); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(lines(b.String()), "\n")
	for _, want := range []string{"History (8 passes, numbered from 0, newest 5;", "PASS TRAIN LOSS TEST LOSS ACCURACY RECORDS/S SECONDS", "7 0.25 0.325 0.85 1000 1.000"} {
		if !strings.Contains(out, want) {
			t.Errorf("history brief lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n2 ") {
		t.Errorf("history brief shows more than the newest 5 passes:\n%s", out)
	}
}

func ptr(v float64) *float64 { return &v }
