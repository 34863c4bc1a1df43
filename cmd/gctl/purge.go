package main

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gtrain/gtrain/api"
)

// purgeTargets says what `job stop --purge` deletes, from the job's status:
// its record everywhere and, on every node that ran it, its job directory
// (jobdir.Root: logs, and without checkpoint.dir the model and checkpoints),
// and what stays because it lives under checkpoint.dir.
func purgeTargets(st api.JobStatus) (deleted, kept []string) {
	deleted = []string{fmt.Sprintf("the job's record (status, history, events) of %s", st.Name)}
	modelInJobDir := st.ModelDir != "" && strings.HasSuffix(filepath.Clean(st.ModelDir), filepath.Join("jobs", st.Name, "model"))
	if modelInJobDir {
		jobDir := filepath.Dir(st.ModelDir)
		deleted = append(deleted, fmt.Sprintf("the trained model %s", st.ModelDir),
			fmt.Sprintf("the checkpoints and logs under %s (on every node that ran the job)", jobDir))
		return deleted, nil
	}
	if st.ModelDir == "" { // no pass ended yet: where the model goes is not known here
		deleted = append(deleted, fmt.Sprintf("the directory jobs/%s under the data dir of every node that ran the job: "+
			"its logs and, unless checkpoint.dir is set, its model and checkpoints, if it wrote any", st.Name))
		return deleted, nil
	}
	deleted = append(deleted, "the job's logs on every node that ran it")
	kept = append(kept, fmt.Sprintf("the model %s and the checkpoints under checkpoint.dir (shared storage)", st.ModelDir))
	return deleted, kept
}

// exportsKept: a purge never touches what `gctl job model --out` wrote.
const exportsKept = "the copies exported with gctl job model (outside the job's directories)"

// confirmPurge tells the operator what the purge deletes and asks on a
// terminal; yes (--yes) confirms without asking. Without a terminal and
// without --yes it refuses (exit 2): a script must say it means it. It
// returns what is deleted, for the command's output.
func (a *app) confirmPurge(ctx context.Context, client api.ControlClient, s settings, name string, yes bool) ([]string, error) {
	st, err := a.getJob(ctx, client, s, name)
	if err != nil {
		return nil, err
	}
	deleted, kept := purgeTargets(st)
	var b strings.Builder
	fmt.Fprintf(&b, "job stop %s --purge deletes, for good:\n", name)
	for _, d := range deleted {
		fmt.Fprintf(&b, "  - %s\n", d)
	}
	for _, k := range append(kept, exportsKept) {
		fmt.Fprintf(&b, "and keeps %s\n", k)
	}
	switch {
	case yes:
		fmt.Fprint(a.stderr, b.String())
		return deleted, nil
	case !a.stdinTTY || a.stdin == nil:
		return nil, usagef("%sno terminal to ask on: pass --yes to confirm, or run `gctl job stop %s` (without --purge) to stop the job and keep its model",
			b.String(), name)
	}
	fmt.Fprintf(a.stderr, "%sDelete them? [y/N] ", b.String())
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return nil, fmt.Errorf("purge of job %s not confirmed: nothing stopped or deleted; `gctl job stop %s` stops it and keeps its model", name, name)
	}
	return deleted, nil
}
