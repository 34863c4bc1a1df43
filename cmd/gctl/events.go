package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

func (a *app) jobEventsCommand() *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "events NAME",
		Short: "Print the job's events; -f streams new ones as they happen",
		Long: `Print the job's events (restarts, rollbacks, checkpoint warnings, its end),
oldest first, one a line: TIME  WHAT. -f keeps streaming new events as they are
recorded, until the job has ended or Ctrl-C. With -o json: one JSON object a line
(JSON lines), {"time", "what"}.`,
		Example: "  gctl job events fit-a-line\n  gctl job events fit-a-line -f -o json",
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
			return a.streamEvents(cmd.Context(), client, s, &api.JobEventsRequest{Name: name, Follow: follow})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep streaming new events until the job ends or Ctrl-C")
	return cmd
}

func (a *app) streamEvents(ctx context.Context, client api.ControlClient, s settings, req *api.JobEventsRequest) error {
	op := fmt.Sprintf("events of job %q", req.Name)
	stream, err := client.JobEvents(ctx, req)
	if err != nil {
		return a.endOfLogs(ctx, s, op, err)
	}
	for {
		doc, err := stream.Recv()
		if err != nil {
			return a.endOfLogs(ctx, s, op, err)
		}
		events, err := decodeDocument[[]api.Event](doc, op)
		if err != nil {
			return err
		}
		if err := writeEvents(a.stdout, events, a.output == render.OutputJSON, a.loc); err != nil {
			return err
		}
	}
}

// writeEvents writes events as lines: "2026-11-21 10:00:00  WHAT", or one
// JSON object a line.
func writeEvents(w io.Writer, events []api.Event, jsonLines bool, loc *time.Location) error {
	for _, e := range events {
		var line string
		if jsonLines {
			b, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("encode event: %w", err)
			}
			line = string(b)
		} else {
			line = render.FormatTime(e.Time, loc) + "  " + e.What
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
