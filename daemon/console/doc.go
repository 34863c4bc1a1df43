// Package console is the web console every agent can serve (`gtraind agent
// --ui-addr HOST:PORT`, docs/reference.md#gtraind-agent): pages for the
// cluster's nodes, the jobs, one job (its curves, workers, placement,
// events, warnings and crash budget, with stop and scale for those allowed)
// and a worker's log tail, kept live by server-sent events.
//
// The console is a client of this agent's own Control API, never of etcd:
// each page's stream calls the same methods gctl calls (ListNodes,
// ListJobs, GetJob, JobEvents, Logs, StopJob, ScaleJob, DrainNode) with the
// logged-in user's bearer token, so a page shows the numbers gctl shows and
// the Control API decides, and audits, who may do what. With TLS the
// console serves HTTPS with the node's certificate and dials the API
// verifying its certificate but presenting none (a client certificate
// would take precedence over the user's token); without TLS the API makes
// every caller the anonymous admin, and so does the console.
//
// session.go keeps the login (the token in an HttpOnly, SameSite=Strict
// cookie) and the CSRF check of every POST; stream.go sends each page only
// what changed since the page's last update (history.go: passes after the
// last one the page has, resumed across reconnects by the event id);
// actions.go turns the buttons into Control API calls; assets/ are the
// embedded pages, style sheet and script (no build step, no framework).
//
// It owns the console's HTTP routes, pages and streams. It must not read or
// write etcd, decide authorization itself (it only hides the buttons a role
// may not use; the Control API refuses the calls anyway), nor define the
// documents it shows (package api does).
package console
