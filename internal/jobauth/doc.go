// Package jobauth is the data plane's job credential (issue 19): what a
// role of a job sends with every call to its job's master and pservers, and
// what those servers check before they answer.
//
// Each job has a random 32-byte secret in etcd (coord.EnsureJobSecret),
// made by the first agent that starts one of its roles. The agent writes it
// into a 0600 file of the job's directory and passes the file's path to the
// role (--job-credential): the secret is never in a command line or an
// environment. A client role sends, as gRPC metadata, the job's name and a
// token, HMAC-SHA256 under the secret of the job's name bound to the TLS
// connection (an exported keying material, RFC 5705): a token seen on one
// connection is worthless on any other, and the secret itself never leaves
// the node. Without TLS (plaintext clusters, `--dev`) the token binds the
// job's name only: it still keeps out what runs on the host without the
// file, but a sniffer could replay it.
//
// A Guard is the server side: with TLS it wants a verified node
// certificate (a job's roles dial with their node's; an operator's client
// certificate is not a role), then the job's name and a token equal, in
// constant time, to the one it derives. A server given no secret checks the
// certificate only.
//
// It owns the token's derivation and its check. It must not read etcd or
// know where the agent keeps the file: callers pass the secret and paths.
package jobauth
