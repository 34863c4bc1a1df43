// Package etcdtest gives tests a real etcd: the single-member etcd that
// `gtraind agent --dev` runs (internal/embedetcd), on free loopback ports.
//
// Starting a member costs about a second, so a test package shares one:
// its TestMain calls Main, and tests take the member with Shared (each test
// isolates itself under keys of its own, e.g. a job named by UniqueName) or
// Fresh (the member is emptied before and after the test, so the test may
// use fixed keys but must not run in parallel with another Fresh test).
// Tests that need a member nobody else touches (parallel tests of agents
// that use the fixed key layout, or tests that stop etcd) Start their own.
//
// It must not import coord or any other gtrain package: coord's own tests
// use it.
package etcdtest
