package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gtrain/gtrain/api"
)

// Output formats of -o.
const (
	OutputTable = "table"
	OutputJSON  = "json"
)

// eventsShown is how many of the newest events `job status` prints.
const eventsShown = 10

func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// WriteJSON prints v indented, the way -o json promises.
func WriteJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json output: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// NonNil makes an empty listing print as [] rather than null.
func NonNil[T any](rows []T) []T {
	if rows == nil {
		return []T{}
	}
	return rows
}

func WriteJobTable(w io.Writer, rows []api.JobRow, now time.Time) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tSTATE\tPASS\tTRAINERS\tPSERVERS\tLOSS\tAGE")
	for _, r := range rows {
		age := r.Age
		if age == "" {
			age = formatAge(r.Created, now)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%s\n",
			r.Name, r.State, r.Pass, r.Passes, r.Trainers, r.Pservers, FormatFloat(r.Loss), age)
	}
	return tw.Flush()
}

func WriteWorkerTable(w io.Writer, rows []api.WorkerRow, loc *time.Location) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tNODE\tPID\tSTATE\tRESTARTS\tGPUS\tSTART")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n",
			r.Name, Dash(r.Node), formatPID(r.PID), Dash(r.State), r.Restarts, formatGPUs(r.GPUs), FormatTime(r.Start, loc))
	}
	return tw.Flush()
}

// formatGPUs is a worker's devices as its CUDA_VISIBLE_DEVICES says them
// ("0,1"); "-" for none.
func formatGPUs(gpus []int) string {
	parts := make([]string, len(gpus))
	for i, d := range gpus {
		parts[i] = strconv.Itoa(d)
	}
	return Dash(strings.Join(parts, ","))
}

// formatNodeGPUs is a node's GPUs held and offered ("1/2"); "-" when it
// offers none and none is held.
func formatNodeGPUs(r api.NodeRow) string {
	if r.GPUs == 0 && len(r.Devices) == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", len(r.Devices), r.GPUs)
}

func WriteNodeTable(w io.Writer, rows []api.NodeRow) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tADDR\tSTATE\tCPU\tMEMORY\tGPUS\tROLES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Name, Dash(r.Addr), Dash(r.State), strconv.FormatFloat(r.CPU, 'f', -1, 64), formatBytes(r.Memory), formatNodeGPUs(r),
			Dash(strings.Join(r.Roles, ",")))
	}
	return tw.Flush()
}

// WriteJobStatus is the table view of `job status`: a summary a person reads
// top to bottom, then the processes, then the newest events.
func WriteJobStatus(w io.Writer, st api.JobStatus, loc *time.Location) error {
	tw := NewTable(w)
	fmt.Fprintf(tw, "Name:\t%s\n", st.Name)
	fmt.Fprintf(tw, "State:\t%s\n", st.State)
	if st.Reason != "" {
		fmt.Fprintf(tw, "Reason:\t%s\n", st.Reason)
	}
	fmt.Fprintf(tw, "Mode:\t%s\n", Dash(st.Mode))
	fmt.Fprintf(tw, "Priority:\t%d\n", st.Priority)
	fmt.Fprintf(tw, "Created:\t%s\n", FormatTime(st.Created, loc))
	fmt.Fprintf(tw, "Pass:\t%d/%d\n", st.Pass, st.Passes)
	fmt.Fprintf(tw, "Step:\t%d\n", st.Step)
	writeCounts(tw, st)
	fmt.Fprintf(tw, "Tasks:\t%s\n", formatTasks(st.Tasks))
	fmt.Fprintf(tw, "Samples applied:\t%s\n", FormatSamplesApplied(st.SamplesApplied, st.Mode))
	fmt.Fprintf(tw, "Metrics:\t%s\n", FormatMetrics(st.Metrics))
	fmt.Fprintf(tw, "Model dir:\t%s\n", Dash(st.ModelDir))
	fmt.Fprintf(tw, "Master:\t%s on %s, pid %s, %d restarts\n",
		Dash(st.Master.Name), Dash(st.Master.Node), formatPID(st.Master.PID), st.Master.Restarts)
	fmt.Fprintf(tw, "Crash budget:\t%s\n", formatBudget(st))
	for i, w := range st.Warnings {
		label := ""
		if i == 0 {
			label = "Warnings:"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, w)
	}
	for _, reason := range hungReasons(st) {
		fmt.Fprintf(tw, "Hung:\t%s\n", reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nTrainers (%d):\n", len(st.Trainers))
	if len(st.Trainers) > 0 {
		tw = NewTable(w)
		fmt.Fprintln(tw, "  ID\tNAME\tNODE\tPID\tSTATE\tRESTARTS")
		for _, t := range st.Trainers {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%d\n", t.ID, t.Name, Dash(t.Node), formatPID(t.PID), Dash(t.State), t.Restarts)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nPservers (%d):\n", len(st.Pservers))
	if len(st.Pservers) > 0 {
		tw = NewTable(w)
		fmt.Fprintln(tw, "  INDEX\tNAME\tNODE\tPID\tADDR\tSTATE\tRESTARTS\tCHECKPOINT STEP")
		for _, p := range st.Pservers {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
				p.Index, p.Name, Dash(p.Node), formatPID(p.PID), Dash(p.Addr), Dash(p.State), p.Restarts, formatCheckpointStep(p.CheckpointStep))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if err := writeHistoryBrief(w, st.History); err != nil {
		return err
	}

	events := st.Events
	if len(events) > eventsShown {
		events = events[len(events)-eventsShown:]
		fmt.Fprintf(w, "\nEvents (newest %d of %d):\n", eventsShown, len(st.Events))
	} else {
		fmt.Fprintf(w, "\nEvents (%d):\n", len(st.Events))
	}
	for _, e := range events {
		if _, err := fmt.Fprintf(w, "  %s  %s\n", FormatTime(e.Time, loc), e.What); err != nil {
			return err
		}
	}
	return nil
}

func formatTasks(t api.TaskCounts) string {
	return fmt.Sprintf("todo %d  pending %d  done %d  failed %d", t.Todo, t.Pending, t.Done, t.Failed)
}

func FormatMetrics(m api.Metrics) string {
	s := "train_loss " + FormatFloat(m.TrainLoss) + "  test_loss " + FormatFloat(m.TestLoss)
	if m.TestAccuracy != nil {
		s += "  test_accuracy " + FormatFloat(m.TestAccuracy)
	}
	return s
}

// FormatFloat prints a loss with four significant digits, "-" when not
// measured yet, and never in exponent form for large values.
func FormatFloat(v *float64) string {
	if v == nil {
		return "-"
	}
	if math.Abs(*v) >= 1e4 {
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return strconv.FormatFloat(*v, 'g', 4, 64)
}

// formatAge is kubectl-like: 42s, 7m, 5h, 3d.
func formatAge(created, now time.Time) string {
	if created.IsZero() {
		return "-"
	}
	d := now.Sub(created)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

func FormatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("2006-01-02 15:04:05")
}

// formatBytes uses the binary units of the job spec's resources (512Mi).
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10)
	}
	value, suffix := float64(n), ""
	for _, s := range []string{"Ki", "Mi", "Gi", "Ti", "Pi"} {
		if value < unit {
			break
		}
		value, suffix = value/unit, s
	}
	if value == math.Trunc(value) {
		return fmt.Sprintf("%.0f%s", value, suffix)
	}
	return fmt.Sprintf("%.1f%s", value, suffix)
}

// formatPID shows "-" for a process that is not running.
func formatPID(pid int) string {
	if pid <= 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

// formatCheckpointStep shows "-" where no checkpoint is known: none
// written yet (a checkpoint holds at least one applied step), or a pserver
// whose registration ended with it.
func formatCheckpointStep(step int64) string {
	if step <= 0 {
		return "-"
	}
	return strconv.FormatInt(step, 10)
}

func Dash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

// formatBudget is the job's crash budget and which roles used some of it.
func formatBudget(st api.JobStatus) string {
	b := st.RestartBudget
	if b.Limit == 0 {
		return "-"
	}
	var used []string
	add := func(name string, n int) {
		if n > 0 {
			used = append(used, fmt.Sprintf("%s %d", name, n))
		}
	}
	add(st.Master.Name, st.Master.BudgetUsed)
	for _, p := range st.Pservers {
		add(p.Name, p.BudgetUsed)
	}
	for _, t := range st.Trainers {
		add(t.Name, t.BudgetUsed)
	}
	if len(used) == 0 {
		return fmt.Sprintf("%d crashes per %s per role; none used", b.Limit, b.Window)
	}
	return fmt.Sprintf("%d crashes per %s per role; used: %s", b.Limit, b.Window, strings.Join(used, ", "))
}
