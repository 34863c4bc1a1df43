// Package endurance holds the end-to-end tests that spend most of their
// time waiting: etcd stopped for 45 s and for five minutes, a master
// killed eight and twenty times (each successor waits out its
// predecessor's lease), an async trainer stopped for 35 s, past the task
// timeout, while its job trains on with the other, and the soak. They run
// on the rig of e2e (internal/testing/e2erig), in their own package so
// that go test runs them beside e2e instead of after it, and in parallel
// with each other (main_test.go) so that the outages idle while the
// others work.
package endurance
