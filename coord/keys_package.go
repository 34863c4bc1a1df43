package coord

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// PackagesPrefix holds the workspaces uploaded with jobs (`gctl job start
// --package`), one value per job, outside the job's prefix so that reading a
// job's status never reads its package.
func PackagesPrefix() string { return Root + "packages/" }

// PackageKey is the key of job's uploaded workspace (a gzipped tar).
func PackageKey(job string) string { return PackagesPrefix() + job }

// GetPackage reads job's uploaded workspace.
func GetPackage(ctx context.Context, kv clientv3.KV, job string) ([]byte, error) {
	resp, err := kv.Get(ctx, PackageKey(job))
	if err != nil {
		return nil, fmt.Errorf("read the package of job %s: %w", job, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("job %s has no uploaded package", job)
	}
	return resp.Kvs[0].Value, nil
}

// PackageFetcher returns a function reading job's package, in the shape
// package program takes.
func PackageFetcher(kv clientv3.KV, job string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) { return GetPackage(ctx, kv, job) }
}
