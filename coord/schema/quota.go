package schema

import "time"

// QuotaRecord is one user's quota (`gctl quota set`): what the running jobs
// the user submitted (JobRecord.Submitter) may ask of the cluster together.
// A nil limit is no limit in that dimension; a user without a record has
// none at all. The scheduler keeps a job PENDING, with the reason, while
// placing it would go over.
type QuotaRecord struct {
	User   string   `json:"user"`
	CPU    *float64 `json:"cpu"`    // CPUs of all placed workers
	Memory *int64   `json:"memory"` // bytes of all placed workers
	GPUs   *int     `json:"gpus"`   // GPUs of all placed workers
	Jobs   *int     `json:"jobs"`   // jobs with placed workers
	// Updated and By: when and by whom (an admin) it was last set.
	Updated time.Time `json:"updated"`
	By      string    `json:"by"`
}
