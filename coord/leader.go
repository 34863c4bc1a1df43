package coord

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// ErrNoLeader is returned when an election has no leader yet.
var ErrNoLeader = errors.New("no leader elected yet")

// Leadership is won authority over a job: it holds while the session's lease
// lives. Every write of the leader goes through Commit or CommitWithEvents
// (commitIf), which compare the election key's create revision, so a
// deposed leader can change nothing.
type Leadership struct {
	cli      *clientv3.Client
	session  *concurrency.Session
	election *concurrency.Election
	// key and rev are captured when leadership is won: the election forgets
	// them on Resign, and the fence must keep comparing against the term won.
	key string
	rev int64
}

// Campaign blocks until this process leads the election under prefix (or ctx
// ends). value is published as the leader's value (e.g. its address).
func Campaign(ctx context.Context, cli *clientv3.Client, session *concurrency.Session, prefix, value string) (*Leadership, error) {
	e := concurrency.NewElection(session, prefix)
	if err := e.Campaign(ctx, value); err != nil {
		return nil, fmt.Errorf("campaign for %s: %w", prefix, err)
	}
	return &Leadership{cli: cli, session: session, election: e, key: e.Key(), rev: e.Rev()}, nil
}

// Done is closed when the session's lease is lost: the leader must stop acting.
func (l *Leadership) Done() <-chan struct{} { return l.session.Done() }

// Guard is the fencing comparison: true only while this leadership holds.
func (l *Leadership) Guard() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)
}

// Rev is the election key's revision, a monotonically increasing leadership term.
func (l *Leadership) Rev() int64 { return l.rev }

// Commit applies ops atomically if and only if the leadership still holds.
// A commit whose outcome etcd left unknown because a member died under it
// is sent again (see resendUnknown).
func (l *Leadership) Commit(ctx context.Context, ops ...clientv3.Op) error {
	return l.commitIf(ctx, nil, ops)
}

// commitIf is Commit with comparisons that must hold as well as the
// leadership (a job's fence).
func (l *Leadership) commitIf(ctx context.Context, cmps []clientv3.Cmp, ops []clientv3.Op) error {
	var resp *clientv3.TxnResponse
	err := resendUnknown(ctx, func() (err error) {
		resp, err = l.cli.Txn(ctx).If(append([]clientv3.Cmp{l.Guard()}, cmps...)...).Then(ops...).Commit()
		return err
	})
	if err != nil {
		return fmt.Errorf("fenced commit: %w", err)
	}
	if !resp.Succeeded {
		return ErrFenced
	}
	return nil
}

// Resign gives up leadership so a standby takes over at once.
func (l *Leadership) Resign(ctx context.Context) error { return l.election.Resign(ctx) }

// LeaderValue returns the value published by the current leader of prefix.
func LeaderValue(ctx context.Context, kv clientv3.KV, prefix string) (string, error) {
	resp, err := kv.Get(ctx, prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("leader of %s: %w", prefix, err)
	}
	if len(resp.Kvs) == 0 {
		return "", ErrNoLeader
	}
	return string(resp.Kvs[0].Value), nil
}

// LeaderTerm returns the term (Leadership.Rev: the election key's create
// revision) of the current leader of prefix: a process told a term checks
// it here rather than trusting it.
func LeaderTerm(ctx context.Context, kv clientv3.KV, prefix string) (int64, error) {
	resp, err := kv.Get(ctx, prefix+"/", append(clientv3.WithFirstCreate(), clientv3.WithKeysOnly())...)
	if err != nil {
		return 0, fmt.Errorf("leader of %s: %w", prefix, err)
	}
	if len(resp.Kvs) == 0 {
		return 0, ErrNoLeader
	}
	return resp.Kvs[0].CreateRevision, nil
}

// ErrClaimed is returned when a key that must have one holder already has one.
var ErrClaimed = errors.New("already claimed")

// Claim creates key=value under lease only if the key is absent. On conflict
// it returns ErrClaimed wrapped with the current holder's value.
func Claim(ctx context.Context, cli *clientv3.Client, key, value string, lease clientv3.LeaseID) error {
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, value, clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return fmt.Errorf("claim %s: %w", key, err)
	}
	if !resp.Succeeded {
		holder := ""
		if rs := resp.Responses[0].GetResponseRange(); rs != nil && len(rs.Kvs) > 0 {
			holder = string(rs.Kvs[0].Value)
		}
		return fmt.Errorf("%s held by %s: %w", key, holder, ErrClaimed)
	}
	return nil
}
