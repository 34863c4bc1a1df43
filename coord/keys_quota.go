package coord

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord/schema"
)

// QuotaPrefix holds one schema.QuotaRecord per user with a quota (`gctl
// quota set`); the scheduler reads them all with the nodes and jobs.
func QuotaPrefix() string { return ClusterPrefix() + "quotas/" }

// QuotaKey is user's quota. User names are certificate common names or
// "anonymous"; a "/" in one is kept out of the key (see QuotaUserOK).
func QuotaKey(user string) string { return QuotaPrefix() + user }

// QuotaUserOK reports whether user can name a quota key.
func QuotaUserOK(user string) bool {
	if user == "" || len(user) > 253 {
		return false
	}
	for _, r := range user {
		if r == '/' || r < ' ' {
			return false
		}
	}
	return true
}

// ReadQuotas is every quota record, by user.
func ReadQuotas(ctx context.Context, kv clientv3.KV, opts ...clientv3.OpOption) (map[string]schema.QuotaRecord, error) {
	list, err := ListJSON[schema.QuotaRecord](ctx, withOpts{kv, opts}, QuotaPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[string]schema.QuotaRecord, len(list))
	for _, q := range list {
		out[q.User] = q
	}
	return out, nil
}

// ReadQuota is user's quota; ok is false when the user has none.
func ReadQuota(ctx context.Context, kv clientv3.KV, user string) (q schema.QuotaRecord, ok bool, err error) {
	_, err = GetJSON(ctx, kv, QuotaKey(user), &q)
	if errors.Is(err, ErrNotFound) {
		return schema.QuotaRecord{}, false, nil
	}
	return q, err == nil, err
}

// withOpts adds options (a revision) to every Get of a KV.
type withOpts struct {
	clientv3.KV
	opts []clientv3.OpOption
}

func (w withOpts) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return w.KV.Get(ctx, key, append(opts, w.opts...)...)
}
