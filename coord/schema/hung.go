package schema

import "time"

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
