// Package e2e holds the tests that prove the mission with real parts: an
// embedded etcd, gRPC on loopback, and (in process_test.go) real gtraind
// processes. It has no non-test code of its own beyond test helpers.
package e2e
