// Package controlapi is the gRPC Control API that gctl talks to
// (docs/reference.md#gctl). Every agent serves the whole cluster from etcd:
// submit, status and stop of jobs (jobs.go, status*.go, history.go), the
// resume of an ended one (resume.go), their
// events (events.go), scaling (scale*.go), nodes and draining (nodes.go),
// per-user quotas (quota.go),
// the checks of a submitted spec's paths and program (paths.go,
// program.go), and every node's role logs, merged by time and relayed from
// the agent that keeps them (logs.go, logsources.go, logmerge.go).
//
// Authorization (authz*.go, audit.go): with a cluster CA every call is made
// by an identity (a verified client certificate, else a bearer token, see
// package auth) whose role the table controlRules checks; operators stop
// only the jobs they submitted (the job record names its submitter).
// Without a CA every caller is an anonymous admin. Every start, stop, resume,
// purge, drain, undrain and quota set is logged as an "audit" line. rpclimits.go bounds
// requests and streams.
//
// It owns the Control API's answers and who may call what. It must not
// place workers (package scheduler: it only reads what a worker asks of its
// node, scheduler.Requests, to show a node's used capacity) nor start processes (package
// supervisor: it only asks it whether a job still runs here), nor touch the
// etcd key layout or record encodings (coord), nor the job spec rules
// (jobspec).
package controlapi
