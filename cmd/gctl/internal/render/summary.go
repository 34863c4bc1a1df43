package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/api"
)

// maxDiffersShown bounds the passes listed by formatSamplesApplied as
// differing from the common count, so a summary stays one line.
const maxDiffersShown = 10

// FormatSamplesApplied is samples_applied in a few words, however many
// passes: "exact, 404 per pass × 300 passes" when every pass applied the
// same count (a sync job's exactly-once guarantee; an async job's count
// is only shown, not called exact), else the most common count and the
// passes that differ: "404 per pass × 298 of 300 passes; differ: pass 3: 400, pass 9: 408".
func FormatSamplesApplied(samples []int64, mode string) string {
	if len(samples) == 0 {
		return "-"
	}
	common, n := mostCommon(samples)
	if n == len(samples) {
		s := fmt.Sprintf("%d per pass × %s", common, plural(len(samples), "pass", "passes"))
		if mode == "sync" {
			return "exact, " + s
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d per pass × %d of %s; differ:", common, n, plural(len(samples), "pass", "passes"))
	shown := 0
	for p, v := range samples {
		if v == common {
			continue
		}
		if shown == maxDiffersShown {
			fmt.Fprintf(&b, " … (%d more)", len(samples)-n-shown)
			break
		}
		if shown > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " pass %d: %d", p, v)
		shown++
	}
	return b.String()
}

// mostCommon returns the value that occurs most often in v (the earliest
// to reach that count on a tie) and how often.
func mostCommon(v []int64) (value int64, count int) {
	counts := map[int64]int{}
	for _, x := range v {
		counts[x]++
		if c := counts[x]; c > count {
			value, count = x, c
		}
	}
	return value, count
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// historyShown is how many of the newest passes `job status` lists.
const historyShown = 5

// formatHistoryBrief lists the newest passes of h for `job status`.
func formatHistoryBrief(h []api.PassHistory) []string {
	if len(h) == 0 {
		return nil
	}
	from := max(0, len(h)-historyShown)
	lines := []string{"  PASS\tTRAIN LOSS\tTEST LOSS\tACCURACY\tRECORDS/S\tSECONDS"}
	for _, e := range h[from:] {
		lines = append(lines, fmt.Sprintf("  %d\t%s\t%s\t%s\t%s\t%s", e.Pass, FormatFloat(e.TrainLoss), FormatFloat(e.TestLoss),
			FormatFloat(e.TestAccuracy), strconv.FormatFloat(e.RecordsPerS, 'f', 0, 64), strconv.FormatFloat(e.Seconds, 'f', 3, 64))) // ms: a fast pass is not 0.0
	}
	return lines
}

// writeHistoryBrief is the History section of the `job status` table.
func writeHistoryBrief(w io.Writer, h []api.PassHistory) error {
	lines := formatHistoryBrief(h)
	if lines == nil {
		return nil
	}
	title := fmt.Sprintf("\nHistory (%d passes, numbered from 0", len(h))
	if len(h) > historyShown {
		title += fmt.Sprintf(", newest %d; all: -o json or gctl job plot", historyShown)
	}
	fmt.Fprintln(w, title+"):")
	tw := NewTable(w)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	return tw.Flush()
}
