package coord

import (
	"strings"
	"time"
)

// HungPrefix holds the job's hung records: one per worker that the master
// found alive but not progressing (sync jobs, restarts.hung_after).
func HungPrefix(job string) string { return JobPrefix(job) + "hung/" }

// HungKey is worker's hung record ("trainer-1", "pserver-0").
func HungKey(job, worker string) string { return HungPrefix(job) + worker }

// ParseHungKey returns the worker of a key built by HungKey for job.
func ParseHungKey(job, key string) (worker string, ok bool) {
	worker, ok = strings.CutPrefix(key, HungPrefix(job))
	if !ok || worker == "" || strings.Contains(worker, "/") {
		return "", false
	}
	return worker, true
}

// HungRecord is written by the job's master (under its leadership) when a
// worker has not progressed for the job's restarts.hung_after, and deleted
// when it progresses again. The agent that runs the worker kills the
// process named by PID and Host so that it is restarted; a record naming
// an earlier incarnation is left alone.
type HungRecord struct {
	Worker string    `json:"worker"`
	PID    int       `json:"pid"`            // the hung process, from its WorkerRecord
	Host   string    `json:"host,omitempty"` // where PID means something
	Since  time.Time `json:"since"`          // when it last progressed
	Reason string    `json:"reason"`
}
