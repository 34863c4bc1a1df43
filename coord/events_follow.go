package coord

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
)

// KeyedEvent is an event with its key: an opaque position in the job's
// event log, which sorts by time, for EventsAfter to go on from.
type KeyedEvent struct {
	Key   string
	Event api.Event
}

// EventsAfter reads job's events recorded after the one at key after ("":
// from the first), oldest first, and the revision of the read (to watch
// from the next one).
func EventsAfter(ctx context.Context, kv clientv3.KV, job, after string) ([]KeyedEvent, int64, error) {
	prefix := EventPrefix(job)
	from := prefix
	if after != "" {
		from = after + "\x00"
	}
	resp, err := kv.Get(ctx, from, clientv3.WithRange(clientv3.GetPrefixRangeEnd(prefix)))
	if err != nil {
		return nil, 0, fmt.Errorf("read events of job %s: %w", job, err)
	}
	out := make([]KeyedEvent, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var e api.Event
		if err := json.Unmarshal(kv.Value, &e); err != nil {
			return nil, 0, fmt.Errorf("decode %s: %w", kv.Key, err)
		}
		out = append(out, KeyedEvent{Key: string(kv.Key), Event: e})
	}
	return out, resp.Header.Revision, nil
}

// WatchEvents watches job's events from revision rev on. Each response
// carries the events recorded (deletions by TrimEvents are left out); a
// response with an error (e.g. rev compacted away) ends the watch: go on
// with EventsAfter.
func WatchEvents(ctx context.Context, cli *clientv3.Client, job string, rev int64) <-chan EventBatch {
	out := make(chan EventBatch)
	go func() {
		defer close(out)
		for resp := range cli.Watch(ctx, EventPrefix(job), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
			b := EventBatch{Err: resp.Err()}
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut {
					continue
				}
				var e api.Event
				if err := json.Unmarshal(ev.Kv.Value, &e); err != nil {
					b.Err = fmt.Errorf("decode %s: %w", ev.Kv.Key, err)
					break
				}
				b.Events = append(b.Events, KeyedEvent{Key: string(ev.Kv.Key), Event: e})
			}
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			if b.Err != nil {
				return
			}
		}
	}()
	return out
}

// EventBatch is one response of WatchEvents.
type EventBatch struct {
	Events []KeyedEvent
	Err    error
}
