// Package etcdproc runs members of a real, multi-member etcd cluster as
// child processes of Debian's etcd-server binary (`etcd`), for the tests
// and benchmarks that need what one embedded member cannot give: a member
// SIGKILLed while the others go on, members on other (namespace) hosts,
// TLS with client certificates.
//
// A member can run behind a command prefix (`ip netns exec NS`), so that
// it binds an address of a network namespace. It must not know gtrain's
// keys or roles.
package etcdproc
