package daemon

import (
	"errors"
)

var (
	// ErrInvalidConfig is wrapped by every rejection of a Config; the message
	// names the field (and the flag that sets it).
	ErrInvalidConfig = errors.New("invalid agent config")
	// ErrNodeNameTaken means a live agent already holds this node name.
	ErrNodeNameTaken = errors.New("duplicate node name")
	// ErrEtcdFailed reports a fatal error of the embedded etcd server.
	ErrEtcdFailed = errors.New("embedded etcd failed")
	// ErrAPIServer reports that the Control API server stopped serving.
	ErrAPIServer = errors.New("control API server failed")
)
