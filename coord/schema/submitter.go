package schema

// Submitter is who submitted a job (JobRecord.Submitter): operators may
// stop only the jobs they submitted. Role is the submitter's role then
// ("viewer", "operator", "admin"); Name is "anonymous" on an agent without TLS.
type Submitter struct {
	Name string `json:"name"`
	Role string `json:"role"`
}
