package coord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func newSession(t *testing.T, cli *clientv3.Client) *concurrency.Session {
	t.Helper()
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func campaign(t *testing.T, cli *clientv3.Client, s *concurrency.Session, prefix, value string) *Leadership {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	l, err := Campaign(ctx, cli, s, prefix, value)
	if err != nil {
		t.Fatalf("Campaign(%s, %s): %v", prefix, value, err)
	}
	return l
}

func keyAbsent(t *testing.T, cli *clientv3.Client, key string) bool {
	t.Helper()
	resp, err := cli.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.Kvs) == 0
}

func TestCommitWhileLeading(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	l := campaign(t, cli, newSession(t, cli), ElectionPrefix(job), "master-a:1")
	if l.Rev() <= 0 {
		t.Errorf("Rev = %d, want a positive term", l.Rev())
	}
	select {
	case <-l.Done():
		t.Fatal("Done closed while the session lives")
	default:
	}
	if err := l.Commit(ctx, clientv3.OpPut(ProgressKey(job), "p1"), clientv3.OpPut(MasterMetaKey(job), "m1")); err != nil {
		t.Fatalf("Commit while leading: %v", err)
	}
	for key, want := range map[string]string{ProgressKey(job): "p1", MasterMetaKey(job): "m1"} {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
			t.Errorf("%s after Commit = %v, want %q", key, resp.Kvs, want)
		}
	}
	if got, err := LeaderValue(ctx, cli, ElectionPrefix(job)); err != nil || got != "master-a:1" {
		t.Errorf("LeaderValue = %q, %v; want master-a:1", got, err)
	}
	if got, err := LeaderTerm(ctx, cli, ElectionPrefix(job)); err != nil || got != l.Rev() {
		t.Errorf("LeaderTerm = %d, %v; want the leader's Rev %d", got, err, l.Rev())
	}
}

func TestCommitFencedAfterSessionClosed(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	s := newSession(t, cli)
	l := campaign(t, cli, s, ElectionPrefix(job), "a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(2 * time.Second):
		t.Error("Done not closed after the session was closed")
	}
	err := l.Commit(ctx, clientv3.OpPut(ProgressKey(job), "stale"))
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("Commit after session close: err = %v, want ErrFenced", err)
	}
	if !keyAbsent(t, cli, ProgressKey(job)) {
		t.Error("fenced Commit wrote its key")
	}
	if _, err := LeaderValue(ctx, cli, ElectionPrefix(job)); !errors.Is(err, ErrNoLeader) {
		t.Errorf("LeaderValue after the only leader's session closed: err = %v, want ErrNoLeader", err)
	}
	if _, err := LeaderTerm(ctx, cli, ElectionPrefix(job)); !errors.Is(err, ErrNoLeader) {
		t.Errorf("LeaderTerm after the only leader's session closed: err = %v, want ErrNoLeader", err)
	}
}

func TestCommitFencedAfterResign(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	s := newSession(t, cli)
	old := campaign(t, cli, s, ElectionPrefix(job), "a")
	if err := old.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := old.Commit(ctx, clientv3.OpPut(ProgressKey(job), "stale")); !errors.Is(err, ErrFenced) {
		t.Fatalf("Commit after Resign: err = %v, want ErrFenced", err)
	}
	if !keyAbsent(t, cli, ProgressKey(job)) {
		t.Error("fenced Commit wrote its key")
	}

	// Winning again on the same session recreates the same election key
	// (it is named after the lease): the old term must stay fenced.
	renewed := campaign(t, cli, s, ElectionPrefix(job), "a")
	if renewed.Rev() <= old.Rev() {
		t.Errorf("new term %d not after old term %d", renewed.Rev(), old.Rev())
	}
	if err := old.Commit(ctx, clientv3.OpPut(ProgressKey(job), "stale")); !errors.Is(err, ErrFenced) {
		t.Errorf("old term's Commit after re-election: err = %v, want ErrFenced", err)
	}
	if !keyAbsent(t, cli, ProgressKey(job)) {
		t.Error("old term's Commit wrote its key")
	}
	if err := renewed.Commit(ctx, clientv3.OpPut(ProgressKey(job), "fresh")); err != nil {
		t.Errorf("new term's Commit: %v", err)
	}
}

func TestSecondCandidateWaitsForFirst(t *testing.T) {
	cliA, cliB := dialTest(t), dialTest(t)
	ctx := t.Context()
	prefix := ElectionPrefix(uniqueJob(t))
	first := campaign(t, cliA, newSession(t, cliA), prefix, "first")

	type won struct {
		l   *Leadership
		err error
	}
	second := make(chan won, 1)
	sessB := newSession(t, cliB)
	go func() {
		l, err := Campaign(ctx, cliB, sessB, prefix, "second")
		second <- won{l, err}
	}()
	select {
	case w := <-second:
		t.Fatalf("second candidate won while the first leads: %+v", w)
	case <-time.After(300 * time.Millisecond):
	}
	if got, err := LeaderValue(ctx, cliB, prefix); err != nil || got != "first" {
		t.Errorf("LeaderValue while first leads = %q, %v; want first", got, err)
	}

	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	var w won
	select {
	case w = <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("second candidate did not lead within 5s of the first resigning")
	}
	if w.err != nil {
		t.Fatalf("second Campaign: %v", w.err)
	}
	if w.l.Rev() <= first.Rev() {
		t.Errorf("second term %d not after first term %d", w.l.Rev(), first.Rev())
	}
	if got, err := LeaderValue(ctx, cliA, prefix); err != nil || got != "second" {
		t.Errorf("LeaderValue after hand-over = %q, %v; want second", got, err)
	}
	if err := first.Commit(ctx, clientv3.OpPut(prefix+"-probe", "first")); !errors.Is(err, ErrFenced) {
		t.Errorf("deposed leader's Commit: err = %v, want ErrFenced", err)
	}
	if err := w.l.Commit(ctx, clientv3.OpPut(prefix+"-probe", "second")); err != nil {
		t.Errorf("new leader's Commit: %v", err)
	}
}

func TestCampaignHonoursContext(t *testing.T) {
	cli := dialTest(t)
	prefix := ElectionPrefix(uniqueJob(t))
	campaign(t, cli, newSession(t, cli), prefix, "first")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := Campaign(ctx, cli, newSession(t, cli), prefix, "second")
	if err == nil || !strings.Contains(err.Error(), prefix) {
		t.Errorf("Campaign with expiring ctx: err = %v, want an error naming %q", err, prefix)
	}
}

func TestLeaderValueNoLeader(t *testing.T) {
	cli := dialTest(t)
	_, err := LeaderValue(t.Context(), cli, ElectionPrefix(uniqueJob(t)))
	if !errors.Is(err, ErrNoLeader) {
		t.Errorf("LeaderValue of an empty election: err = %v, want ErrNoLeader", err)
	}
}

func TestClaim(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	key := PserverKey(uniqueJob(t), 0)
	l1, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Revoke(context.Background(), l2.ID) })

	if err := Claim(ctx, cli, key, "holder-one", l1.ID); err != nil {
		t.Fatalf("first Claim: %v", err)
	}
	err = Claim(ctx, cli, key, "holder-two", l2.ID)
	if !errors.Is(err, ErrClaimed) {
		t.Fatalf("second Claim: err = %v, want ErrClaimed", err)
	}
	if !strings.Contains(err.Error(), "holder-one") || !strings.Contains(err.Error(), key) {
		t.Errorf("ErrClaimed message %q does not name the key %q and holder-one", err, key)
	}
	resp, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Kvs[0].Value) != "holder-one" || clientv3.LeaseID(resp.Kvs[0].Lease) != l1.ID {
		t.Errorf("refused Claim changed the key: value %q lease %x", resp.Kvs[0].Value, resp.Kvs[0].Lease)
	}

	if _, err := cli.Revoke(ctx, l1.ID); err != nil {
		t.Fatal(err)
	}
	if err := Claim(ctx, cli, key, "holder-two", l2.ID); err != nil {
		t.Fatalf("Claim after the holder's lease was revoked: %v", err)
	}
	resp, err = cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Kvs[0].Value) != "holder-two" || clientv3.LeaseID(resp.Kvs[0].Lease) != l2.ID {
		t.Errorf("after re-claim: value %q lease %x, want holder-two under %x", resp.Kvs[0].Value, resp.Kvs[0].Lease, l2.ID)
	}
}
