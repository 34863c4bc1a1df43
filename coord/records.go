package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")

// GetJSON reads key into v. It returns ErrNotFound (wrapped with the key) when absent,
// and the key's ModRevision otherwise.
func GetJSON(ctx context.Context, kv clientv3.KV, key string, v any) (int64, error) {
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("etcd get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return 0, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, v); err != nil {
		return 0, fmt.Errorf("decode %s: %w", key, err)
	}
	return resp.Kvs[0].ModRevision, nil
}

// PutJSON writes v at key.
func PutJSON(ctx context.Context, kv clientv3.KV, key string, v any, opts ...clientv3.OpOption) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	if _, err := kv.Put(ctx, key, string(b), opts...); err != nil {
		return fmt.Errorf("etcd put %s: %w", key, err)
	}
	return nil
}

// ListJSON decodes every value under prefix, in key order, calling fn for each.
func ListJSON[T any](ctx context.Context, kv clientv3.KV, prefix string) ([]T, error) {
	resp, err := kv.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd list %s: %w", prefix, err)
	}
	out := make([]T, 0, len(resp.Kvs))
	for _, kvp := range resp.Kvs {
		var v T
		if err := json.Unmarshal(kvp.Value, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", kvp.Key, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// MustJSON encodes a record that cannot fail to encode (plain structs).
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("coord: encoding %T: %v", v, err))
	}
	return string(b)
}
