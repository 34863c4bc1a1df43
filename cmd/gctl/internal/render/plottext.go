package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/api"
)

// Size of a text chart: fits an 80-column terminal with the axis labels.
const (
	TextChartWidth  = 64
	TextChartHeight = 12
)

// curveMarks are the marks of a chart's curves, in order.
var curveMarks = []byte{'*', 'o', '+', 'x'}

// bothMark is a cell where curves meet.
const bothMark = '#'

// TextChart draws curves (one value per history entry) as lines of text:
// a title, height rows with the value axis on the left, the pass axis and
// a legend. Passes are spread over width columns; when there are more
// passes than columns, a column shows the last pass that falls in it.
func TextChart(title string, h []api.PassHistory, cs []curve, width, height int) []string {
	lo, hi := valueRange(cs)
	grid := make([][]byte, height)
	for r := range grid {
		grid[r] = []byte(strings.Repeat(" ", width))
	}
	n := len(h)
	for ci, c := range cs {
		for i, v := range c.values {
			if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
				continue
			}
			col := 0
			if n > 1 {
				col = int(math.Round(float64(i) * float64(width-1) / float64(n-1)))
			}
			row := int(math.Round((hi - *v) / (hi - lo) * float64(height-1)))
			mark := curveMarks[ci%len(curveMarks)]
			if cur := grid[row][col]; cur != ' ' && cur != mark {
				mark = bothMark // two curves in one cell
			}
			grid[row][col] = mark
		}
	}
	lines := []string{title}
	for r, row := range grid {
		label := ""
		switch r {
		case 0:
			label = shortNumber(hi)
		case height / 2:
			label = shortNumber(hi - (hi-lo)*float64(r)/float64(height-1))
		case height - 1:
			label = shortNumber(lo)
		}
		lines = append(lines, fmt.Sprintf("%9s |%s", label, strings.TrimRight(string(row), " ")))
	}
	lines = append(lines, strings.Repeat(" ", 10)+"+"+strings.Repeat("-", width))
	first, last := "", ""
	if n > 0 {
		first, last = strconv.Itoa(h[0].Pass), strconv.Itoa(h[n-1].Pass)
	}
	axis := fmt.Sprintf("%11s%s%s", "", first, strings.Repeat(" ", max(1, width-len(first)-len(last))))
	lines = append(lines, axis+last+"  pass")
	var legend []string
	for ci, c := range cs {
		legend = append(legend, fmt.Sprintf("%c %s", curveMarks[ci%len(curveMarks)], c.name))
	}
	if len(cs) > 1 {
		legend = append(legend, string(bothMark)+" both")
	}
	return append(lines, strings.Repeat(" ", 11)+strings.Join(legend, "   "))
}

// valueRange is the span of every measured value, widened when flat so
// that a constant curve sits in the middle.
func valueRange(cs []curve) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range cs {
		for _, v := range c.values {
			if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				lo, hi = min(lo, *v), max(hi, *v)
			}
		}
	}
	switch {
	case lo > hi:
		return 0, 1
	case lo == hi:
		d := max(math.Abs(lo)*0.1, 1e-9)
		return lo - d, hi + d
	}
	return lo, hi
}

func shortNumber(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}
