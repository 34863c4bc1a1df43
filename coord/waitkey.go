package coord

import (
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyPoll bounds how long a lost watch delays waitForKey.
const keyPoll = 5 * time.Second

// waitForKey reads key until reached holds for it (kv nil: the key is
// absent), watching it from the revision read so that no change between
// the read and the watch is missed, and reading again at least every
// keyPoll. It reports whether reached held; false means ctx ended first.
func waitForKey(ctx context.Context, cli *clientv3.Client, key string, reached func(kv *mvccpb.KeyValue) bool) bool {
	for ctx.Err() == nil {
		resp, err := cli.Get(ctx, key)
		var rev int64 // 0: watch from now (after a failed read)
		if err == nil {
			var kv *mvccpb.KeyValue
			if len(resp.Kvs) > 0 {
				kv = resp.Kvs[0]
			}
			if reached(kv) {
				return true
			}
			rev = resp.Header.Revision + 1
		}
		wctx, cancel := context.WithTimeout(ctx, keyPoll)
		select {
		case <-cli.Watch(wctx, key, clientv3.WithRev(rev)):
		case <-wctx.Done():
		}
		cancel()
	}
	return false
}
