package render

import "github.com/gtrain/gtrain/api"

// hungReasons are the reasons of the job's workers shown as hung.
func hungReasons(st api.JobStatus) []string {
	var out []string
	for _, t := range st.Trainers {
		if t.State == api.WorkerHung {
			out = append(out, t.Reason)
		}
	}
	for _, p := range st.Pservers {
		if p.State == api.WorkerHung {
			out = append(out, p.Reason)
		}
	}
	return out
}
