package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/internal/atomicfile"
)

func (a *app) jobPlotCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot NAME [--out F.png]",
		Short: "Draw the job's loss and accuracy per pass",
		Long: `Draw the job's train and test loss per pass and, for classifiers, the test
accuracy, from the history of its status (one point per finished pass). With --out
a PNG is written to that file; without, a text chart is printed. -o does not apply.`,
		Example: "  gctl job plot fit-a-line\n  gctl job plot fit-a-line --out loss.png",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			if out != "" && !strings.HasSuffix(strings.ToLower(out), ".png") {
				return usagef("--out %s: the plot is a PNG; give a file name ending in .png", out)
			}
			st, err := a.fetchJob(cmd.Context(), name)
			if err != nil {
				return err
			}
			return a.plot(st, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write a PNG to this file instead of printing a text chart")
	return cmd
}

func (a *app) plot(st api.JobStatus, out string) error {
	if len(st.History) == 0 {
		msg := fmt.Sprintf("job %s has no finished pass yet: nothing to plot (state %s, %d/%d passes done)", st.Name, st.State, st.Pass, st.Passes)
		if out != "" {
			// A script asked for a file: ending 0 without one would hide it.
			return fmt.Errorf("%s; %s not written: retry once `gctl job status %s` shows a finished pass", msg, out, st.Name)
		}
		_, err := fmt.Fprintln(a.stdout, msg)
		return err
	}
	if out != "" {
		if err := atomicfile.WriteFunc(out, 0o644, func(w io.Writer) error { return render.WritePNG(w, st.Name, st.History) }); err != nil {
			return fmt.Errorf("plot of job %s: %w", st.Name, err)
		}
		_, err := fmt.Fprintf(a.stdout, "wrote %s (%d passes of job %s)\n", out, len(st.History), st.Name)
		return err
	}
	loss, accuracy := render.Curves(st.History)
	lines := render.TextChart(st.Name+": loss per pass", st.History, loss, render.TextChartWidth, render.TextChartHeight)
	if len(accuracy) > 0 {
		lines = append(lines, "")
		lines = append(lines, render.TextChart(st.Name+": test accuracy per pass", st.History, accuracy, render.TextChartWidth, render.TextChartHeight)...)
	}
	_, err := fmt.Fprintln(a.stdout, strings.Join(lines, "\n"))
	return err
}
