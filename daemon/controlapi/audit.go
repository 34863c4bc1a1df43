package controlapi

import (
	"encoding/json"

	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
)

// audit logs who made a mutating call (acc.action is not "") and how it
// ended, refused calls included: one INFO line "audit" per call.
func (z *authorizer) audit(id auth.Identity, acc access, target string, err error) {
	if acc.action == "" {
		return
	}
	result := "ok"
	if err != nil {
		result = status.Code(err).String()
	}
	z.log.Info("audit", "who", id.Name, "who_role", id.RoleName(), "via", id.Via, "token", id.TokenID,
		"action", acc.action, "target", target, "result", result)
}

// auditTarget is the job, node or user a call is about: the name in its request,
// or for a submit the answer's name (else the spec's, when it decodes).
func auditTarget(req, resp any) string {
	if r, ok := resp.(*api.SubmitJobResponse); ok && r != nil {
		return r.GetName()
	}
	switch r := req.(type) {
	case *api.SubmitJobRequest:
		var spec struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(r.GetSpecJson(), &spec) // best effort: the spec may be what was refused
		return spec.Name
	case interface{ GetName() string }:
		return r.GetName()
	case interface{ GetUser() string }:
		return r.GetUser()
	case interface{ GetId() string }:
		return r.GetId() // a token id
	}
	return ""
}
