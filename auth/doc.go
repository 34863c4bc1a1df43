// Package auth is who a caller of the Control API is and what it may do
// (issue 10, authorization): the roles (viewer < operator < admin; a node
// certificate is none of them: Identity.Node, which only relays), the Identity an agent derives from a verified
// client certificate (CommonName = name, OrganizationalUnit[0] = role) or
// from a bearer token, and those tokens: JWTs signed ES256 with the cluster
// CA's key and verified with the CA certificate alone, so that any agent
// checks any token without state of its own.
//
// It owns the role names, the token format (claims sub, role, iss, aud, jti,
// iat, exp; a maximum lifetime; a revocation check the caller supplies) and the
// identity carried in a request's context. It must not know the Control
// API's methods or which role each needs (package daemon/controlapi decides that),
// nor issue certificates (package pki does).
package auth
