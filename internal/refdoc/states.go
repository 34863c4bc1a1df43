package refdoc

// stateTables are the values of api's state types, read from api/status.go,
// and what each means to an operator.
var stateTables = []struct {
	Section, Type string
	Meanings      map[string]string
}{
	{"job-states", "JobState", map[string]string{
		"PENDING":   "accepted, not running yet: waiting for capacity (`reason` says what is short, where) or for its nodes",
		"RUNNING":   "placed and training",
		"SUCCEEDED": "ran every pass; the model is in model_dir",
		"FAILED":    "ended by an error: a role past its crash budget, a loss that diverged, data that cannot be read; `reason` says which; `gctl job resume` continues it from its newest complete global checkpoint (async: each pserver's own newest)",
		"STOPPED":   "ended by `gctl job stop`; `gctl job resume` continues it from its newest complete global checkpoint (async: each pserver's own newest, written as the job stopped)",
	}},
	{"worker-states", "WorkerState", map[string]string{
		"pending":    "no process yet (shown only)",
		"starting":   "its agent is starting the process",
		"running":    "its process runs",
		"restarting": "its process ended and its agent restarts it",
		"exited":     "its process ended by itself with status 0: its part of the job is done",
		"failed":     "it crashed more often than the crash budget allows, and the job failed with it",
		"stopped":    "its agent stopped it: the job ended or was stopped, or the worker moved to another node",
		"lost":       "its record says it runs on a node that is down: it is not running (shown only)",
		"hung":       "alive but not progressing for `restarts.hung_after`; its agent kills it to restart it (shown only)",
		"exiting":    "its job ended and the process is on its way out (shown only)",
	}},
	{"node-states", "NodeState", map[string]string{
		"ready":    "registered and alive: takes new work",
		"down":     "its lease ended or gossip declared it dead; it stays listed",
		"draining": "alive, but `gctl node drain` moves its roles away",
	}},
}

// StateFile is where api declares the state types.
const StateFile = "api/status.go"
