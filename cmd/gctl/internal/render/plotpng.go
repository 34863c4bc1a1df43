package render

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gtrain/gtrain/api"
)

// curve is one line of a chart: a value per pass, nil where unmeasured.
type curve struct {
	name   string
	values []*float64
}

// Curves are the loss and accuracy lines of a history.
func Curves(h []api.PassHistory) (loss []curve, accuracy []curve) {
	train, test, acc := curve{name: "train loss"}, curve{name: "test loss"}, curve{name: "test accuracy"}
	for _, e := range h {
		train.values = append(train.values, e.TrainLoss)
		test.values = append(test.values, e.TestLoss)
		acc.values = append(acc.values, e.TestAccuracy)
	}
	for _, c := range []curve{train, test} {
		if c.measured() > 0 {
			loss = append(loss, c)
		}
	}
	if acc.measured() > 0 {
		accuracy = append(accuracy, acc)
	}
	return loss, accuracy
}

func (c curve) measured() int {
	n := 0
	for _, v := range c.values {
		if v != nil {
			n++
		}
	}
	return n
}

// points are c's measured values with their pass numbers.
func (c curve) points(h []api.PassHistory) plotter.XYs {
	var xy plotter.XYs
	for i, v := range c.values {
		if v != nil {
			xy = append(xy, plotter.XY{X: float64(h[i].Pass), Y: *v})
		}
	}
	return xy
}

// WritePNG draws the loss curves, and below them the accuracy when the
// model is a classifier, as a PNG of job's history.
func WritePNG(w io.Writer, job string, h []api.PassHistory) error {
	loss, accuracy := Curves(h)
	var rows [][]*plot.Plot
	lp, err := chartOf(h, loss, job+": loss per pass", "loss")
	if err != nil {
		return err
	}
	rows = append(rows, []*plot.Plot{lp})
	if len(accuracy) > 0 {
		ap, err := chartOf(h, accuracy, job+": test accuracy per pass", "accuracy")
		if err != nil {
			return err
		}
		rows = append(rows, []*plot.Plot{ap})
	}
	img := vgimg.New(8*vg.Inch, vg.Length(len(rows))*4*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, dc)
	for i := range rows {
		rows[i][0].Draw(canvases[i][0])
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

func chartOf(h []api.PassHistory, cs []curve, title, ylabel string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "pass (from 0, as in status history)"
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = passTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = ylabel == "loss" // losses fall, accuracy rises: keep the legend off the curves
	var args []any
	for _, c := range cs {
		args = append(args, c.name, c.points(h))
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, fmt.Errorf("plot %s: %w", title, err)
	}
	return p, nil
}

// passTicks labels the pass axis with whole pass numbers only.
type passTicks struct{}

func (passTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		ticks[i].Label = ""
		if t.Value == math.Trunc(t.Value) && !t.IsMinor() {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}
