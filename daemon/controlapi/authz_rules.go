package controlapi

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord/schema"
)

// access is what one call needs: the lowest role allowed, what the call does
// in words ("stop jobs", for the denial), and its audit action ("" for
// reads, which are not audited).
type access struct {
	need   auth.Role
	what   string
	action string
}

// rule is the access a call needs, from its request (nil for a stream).
type rule func(req any) access

func fixed(need auth.Role, what, action string) rule {
	return func(any) access { return access{need: need, what: what, action: action} }
}

// controlRules is who may call each Control API method: viewers read,
// operators start and stop (their own jobs, see mayChangeJob), admins also
// purge, drain and set quotas. A method without a rule is refused; a test checks that
// every method of api.Control_ServiceDesc has one.
var controlRules = map[string]rule{
	api.Control_ListJobs_FullMethodName:    fixed(auth.Viewer, "list jobs", ""),
	api.Control_GetJob_FullMethodName:      fixed(auth.Viewer, "read jobs", ""),
	api.Control_ListWorkers_FullMethodName: fixed(auth.Viewer, "list workers", ""),
	api.Control_Logs_FullMethodName:        fixed(auth.Viewer, "read logs", ""),
	api.Control_ListNodes_FullMethodName:   fixed(auth.Viewer, "list nodes", ""),
	api.Control_JobEvents_FullMethodName:   fixed(auth.Viewer, "read events", ""),
	api.Control_SubmitJob_FullMethodName:   fixed(auth.Operator, "start jobs", "start"),
	api.Control_StopJob_FullMethodName:     stopRule,
	api.Control_DrainNode_FullMethodName:   fixed(auth.Admin, "drain nodes", "drain"),
	api.Control_UndrainNode_FullMethodName: fixed(auth.Admin, "undrain nodes", "undrain"),
	api.Control_ScaleJob_FullMethodName:    fixed(auth.Operator, "scale jobs", "scale"), // own jobs: see ScaleJob
	api.Control_FetchModel_FullMethodName:  fixed(auth.Viewer, "read models", ""),
	api.Control_ResumeJob_FullMethodName:   fixed(auth.Operator, "resume jobs", "resume"), // own jobs: see ResumeJob
	api.Control_GetQuota_FullMethodName:    fixed(auth.Viewer, "read quotas", ""),         // own quota: see GetQuota
	api.Control_SetQuota_FullMethodName:    fixed(auth.Admin, "set quotas", "quota-set"),
	api.Control_RevokeToken_FullMethodName: fixed(auth.Admin, "revoke tokens", "token-revoke"),
}

// nodeCalls are the calls an agent makes of another with its node's
// certificate (logsources.go, model.go): the only ones a node identity may
// make, so that one node's key reads logs and models but starts, stops or
// purges nothing.
var nodeCalls = map[string]bool{
	api.Control_Logs_FullMethodName:       true,
	api.Control_FetchModel_FullMethodName: true,
}

// stopRule: stopping needs operator, purging (which deletes the job's
// records and directories) admin.
func stopRule(req any) access {
	if r, ok := req.(*api.StopJobRequest); ok && r.GetPurge() {
		return access{need: auth.Admin, what: "purge jobs", action: "purge"}
	}
	return access{need: auth.Operator, what: "stop jobs", action: "stop"}
}

// mayChangeJob lets admins change any job and others only the jobs they
// submitted (an operator's "its jobs").
func mayChangeJob(id auth.Identity, job string, rec *schema.JobRecord, what string) error {
	if id.Role.Allows(auth.Admin) {
		return nil
	}
	if rec.Submitter != nil && rec.Submitter.Name == id.Name {
		return nil
	}
	by := "before roles existed"
	if rec.Submitter != nil {
		by = "by " + rec.Submitter.Name + " (" + rec.Submitter.Role + ")"
	}
	return status.Errorf(codes.PermissionDenied, "%s may not %s job %s: it was submitted %s; an operator may %s only its own jobs, needs admin",
		id, what, job, by, what)
}

// submitter is how a job record names who submitted it.
func submitter(id auth.Identity) *schema.Submitter {
	return &schema.Submitter{Name: id.Name, Role: id.Role.String()}
}
