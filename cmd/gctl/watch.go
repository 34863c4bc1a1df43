package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

// watchEventsShown is how many of a job's past events `job watch` prints
// before its progress line: what led here, not the whole history
// (`gctl job events` has it).
const watchEventsShown = 5

func (a *app) jobWatchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "watch NAME",
		Short: "Re-attach the live progress line of `job start` to a job",
		Long: `Follow a job as 'gctl job start' does: the newest events, then a live progress
line on a terminal (plain lines otherwise) and every new event, until the job ends;
then its summary (-o json: the job status document). Ctrl-C stops watching, not the job.

Exit status: 0 when the job SUCCEEDED, 1 when it ended FAILED or STOPPED, 2 for an
unknown job.`,
		Example: "  gctl job start -f job.yaml --detach\n  gctl job watch fit-a-line",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			client, s, done, err := a.connect()
			if err != nil {
				return err
			}
			defer done()
			st, err := a.getJob(cmd.Context(), client, s, name) // an unknown job: exit 2, nothing printed
			if err != nil {
				return err
			}
			progress, _ := a.progressOut()
			fmt.Fprintf(progress, "watching job %s; Ctrl-C stops watching, not the job\n", name)
			return a.followJob(cmd.Context(), client, s, name, pastEvents(st, watchEventsShown))
		},
	}
}

// pastEvents marks every event of st but the newest keep as already seen.
func pastEvents(st api.JobStatus, keep int) map[eventKey]bool {
	seen := map[eventKey]bool{}
	for _, e := range st.Events[:max(0, len(st.Events)-keep)] {
		seen[eventKey{unixNano: e.Time.UnixNano(), what: e.What}] = true
	}
	return seen
}

// progressOut is where monitoring writes its progress, and whether that is
// a terminal: stdout, or stderr when stdout carries -o json.
func (a *app) progressOut() (out io.Writer, tty bool) {
	if a.output == render.OutputJSON {
		return a.stderr, false
	}
	return a.stdout, a.stdoutTTY
}

// followJob monitors job name until it ends (`job start`, `job watch`),
// printing the events not in seen; then its summary, and ErrJobNotSucceeded
// (exit 1) unless it SUCCEEDED. Ctrl-C detaches and leaves the job running.
func (a *app) followJob(ctx context.Context, client api.ControlClient, s settings, name string, seen map[eventKey]bool) error {
	progress, tty := a.progressOut()
	m := &monitor{
		out:  progress,
		tty:  tty,
		loc:  a.loc,
		seen: seen,
		poll: func(ctx context.Context) (api.JobStatus, error) {
			return a.getJob(ctx, client, s, name)
		},
		wait: func(ctx context.Context) error { return a.wait(ctx, pollInterval) },
	}
	st, err := m.run(ctx)
	if errors.Is(err, errDetached) {
		_, err := fmt.Fprintf(progress, "detached; job %s keeps running (gctl job status %s)\n", name, name)
		return err
	}
	if err != nil {
		return fmt.Errorf("%w; the job may still be running: gctl job status %s", err, name)
	}
	if a.output == render.OutputJSON {
		err = render.WriteJSON(a.stdout, st)
	} else {
		err = writeFinal(a.stdout, st)
	}
	if err != nil {
		return err
	}
	return finalError(st)
}
