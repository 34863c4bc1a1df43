package coord

import (
	"strings"
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
