package schema

// JobSecretRecord is a job's data-plane secret (issue 19): the roles of the
// job prove to its masters and pservers that they belong to it with a token
// derived from Secret (package jobauth). JobRev is the create revision of
// the job record it was made for, so that a secret left by a purged job of
// the same name is never taken for the new one's.
type JobSecretRecord struct {
	JobRev int64  `json:"job_rev"`
	Secret []byte `json:"secret"`
}
