// Package metrics owns gtrain's Prometheus metrics: their names, what the
// role processes record, how a role serves them and how an agent's
// `/metrics` (--metrics-addr) gathers them.
//
// How role metrics reach the agent: every role process the agent starts
// with --metrics-file serves its own registry on a loopback port it picks
// (127.0.0.1:0) and writes that address into the file (under the job's
// directory, see jobdir.MetricsAddr). The agent's /metrics handler answers
// with its own registry (restarts and liveness of the workers it
// supervises) merged with a scrape of each child it runs, done at the
// time of the request, to which it adds the labels job, role and worker.
// So there is no push, no snapshot file to go stale, and a child that died
// is simply missing from that scrape (its restart shows in the agent's own
// counters); a counter that starts again from 0 after a restart is what
// Prometheus's rate() expects.
//
// It must not know the job's logic: roles call the small recorders here
// (nil-safe, so a role without metrics passes nil).
package metrics
