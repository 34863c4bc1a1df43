package controlapi

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord/schema"
)

// Every method of the Control service has a rule, and every rule a method:
// a new RPC without one would be refused to everyone, a stale rule is dead.
func TestControlRulesCoverEveryMethod(t *testing.T) {
	sd := api.Control_ServiceDesc
	methods := map[string]bool{}
	for _, m := range sd.Methods {
		methods["/"+sd.ServiceName+"/"+m.MethodName] = true
	}
	for _, s := range sd.Streams {
		methods["/"+sd.ServiceName+"/"+s.StreamName] = true
	}
	for m := range methods {
		if controlRules[m] == nil {
			t.Errorf("Control method %s has no rule in controlRules", m)
		}
	}
	for m := range controlRules {
		if !methods[m] {
			t.Errorf("controlRules has a rule for %s, which the Control service does not have", m)
		}
	}
}

// The role each call needs: viewers read, operators start and stop, admins
// also purge and drain.
func TestControlRulesRoles(t *testing.T) {
	for _, c := range []struct {
		method string
		req    any
		need   auth.Role
		action string
	}{
		{api.Control_ListJobs_FullMethodName, &api.ListJobsRequest{}, auth.Viewer, ""},
		{api.Control_GetJob_FullMethodName, &api.GetJobRequest{}, auth.Viewer, ""},
		{api.Control_ListWorkers_FullMethodName, &api.GetJobRequest{}, auth.Viewer, ""},
		{api.Control_Logs_FullMethodName, nil, auth.Viewer, ""},
		{api.Control_ListNodes_FullMethodName, &api.ListNodesRequest{}, auth.Viewer, ""},
		{api.Control_SubmitJob_FullMethodName, &api.SubmitJobRequest{}, auth.Operator, "start"},
		{api.Control_StopJob_FullMethodName, &api.StopJobRequest{Name: "j"}, auth.Operator, "stop"},
		{api.Control_StopJob_FullMethodName, &api.StopJobRequest{Name: "j", Purge: true}, auth.Admin, "purge"},
		{api.Control_DrainNode_FullMethodName, &api.NodeRequest{}, auth.Admin, "drain"},
		{api.Control_UndrainNode_FullMethodName, &api.NodeRequest{}, auth.Admin, "undrain"},
		{api.Control_GetQuota_FullMethodName, &api.QuotaRequest{}, auth.Viewer, ""},
		{api.Control_SetQuota_FullMethodName, &api.SetQuotaRequest{}, auth.Admin, "quota-set"},
	} {
		acc := controlRules[c.method](c.req)
		if acc.need != c.need || acc.action != c.action || acc.what == "" {
			t.Errorf("%s %v: got %+v, want need %s action %q", c.method, c.req, acc, c.need, c.action)
		}
	}
}

func TestMayChangeJob(t *testing.T) {
	bobs := &schema.JobRecord{Submitter: &schema.Submitter{Name: "bob", Role: "operator"}}
	old := &schema.JobRecord{}
	for _, c := range []struct {
		id      auth.Identity
		rec     *schema.JobRecord
		ok      bool
		message string
	}{
		{auth.Identity{Name: "bob", Role: auth.Operator}, bobs, true, ""},
		{auth.Identity{Name: "root", Role: auth.Admin}, bobs, true, ""},
		{auth.Anonymous(), old, true, ""},
		{auth.Identity{Name: "carol", Role: auth.Operator}, bobs, false, "carol (operator) may not stop job j: it was submitted by bob (operator)"},
		{auth.Identity{Name: "carol", Role: auth.Operator}, old, false, "submitted before roles existed"},
	} {
		err := mayChangeJob(c.id, "j", c.rec, "stop")
		if (err == nil) != c.ok || err != nil && (status.Code(err) != codes.PermissionDenied ||
			!strings.Contains(status.Convert(err).Message(), c.message) || !strings.Contains(err.Error(), "needs admin")) {
			t.Errorf("%s on %+v: got %v", c.id, c.rec.Submitter, err)
		}
	}
}
