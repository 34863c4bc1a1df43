package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Discover waits until all n pservers of job's layout generation gen are
// registered in etcd, restored and serving, and returns their addresses by
// index (a pserver of another generation does not count: see Reshard). It logs while it waits, so an operator
// reading the log sees what is missing.
func Discover(ctx context.Context, cli *clientv3.Client, job string, gen int64, n int, log *slog.Logger) ([]Target, error) {
	prefix := coord.PserverPrefix(job)
	lastLog := time.Time{}
	for {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return nil, fmt.Errorf("discover pservers of %s: %w", job, err)
		}
		addrs := make([]Target, n)
		found := 0
		for _, kv := range resp.Kvs {
			var r schema.PserverRecord
			if json.Unmarshal(kv.Value, &r) != nil || !r.Ready || r.Generation != gen || r.Index < 0 || r.Index >= n {
				continue
			}
			if addrs[r.Index].Addr == "" {
				found++
			}
			addrs[r.Index] = targetOf(r)
		}
		if found == n {
			return addrs, nil
		}
		if log != nil && time.Since(lastLog) > 5*time.Second {
			log.Info("waiting for pservers", "registered", found, "want", n)
			lastLog = time.Now()
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		wch := cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-wch:
		case <-wctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("discover pservers of %s: %w", job, ctx.Err())
		}
	}
}

// Target is where a client reaches one pserver: Addr, or its unix socket
// where it serves on one this process can reach (Socket, "" if not).
type Target struct {
	Addr   string
	Socket string
}

// targetOf is where this process reaches the pserver r registers: its
// socket when r serves on one in this process's network host and the file
// is there (another mount namespace may not see it), else Addr.
func targetOf(r schema.PserverRecord) Target {
	t := Target{Addr: r.Addr}
	if r.Socket == "" || r.SocketHost == "" || r.SocketHost != coord.NetHostID() {
		return t
	}
	if fi, err := os.Stat(r.Socket); err == nil && fi.Mode().Type() == fs.ModeSocket {
		t.Socket = r.Socket
	}
	return t
}
