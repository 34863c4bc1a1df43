package coord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/gtrain/gtrain/internal/testing/etcdproc"
)

// etcdBinary skips, loudly, where Debian's etcd-server is missing (.ci/run
// installs it).
func etcdBinary(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd processes")
	}
	if _, err := etcdproc.Binary(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: %v", err)
	}
}

// loopbackMembers are n members of a new cluster on free loopback ports.
// threeMembersWithSession starts a 3-member etcd on loopback and returns a
// client of all three with a session of the TTL the agents and roles use (a
// client-side keep-alive gives up after a TTL without an answer, and a new
// leader takes a second or two), all closed with the test.
func threeMembersWithSession(t *testing.T) ([]*etcdproc.Member, *clientv3.Client, *concurrency.Session) {
	t.Helper()
	etcdBinary(t)
	ms := loopbackMembers(t, 3, nil)
	cli, err := DialConfig(t.Context(), EtcdConfig{Endpoints: etcdproc.Endpoints(ms)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	sess, err := NewSession(t.Context(), cli, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return ms, cli, sess
}

func loopbackMembers(t *testing.T, n int, pki *etcdproc.PKI) []*etcdproc.Member {
	t.Helper()
	dir := t.TempDir()
	for attempt := 0; ; attempt++ {
		var ms []*etcdproc.Member
		// A port freed after the check can be found free again: the
		// kernel handed m0 and m2 one peer port once (CI). Never twice.
		used := map[int]bool{}
		distinct := func() int {
			for {
				if p := freePort(t); !used[p] {
					used[p] = true
					return p
				}
			}
		}
		for i := range n {
			m := &etcdproc.Member{Name: fmt.Sprintf("m%d", i), Host: "127.0.0.1",
				Dir: filepath.Join(dir, fmt.Sprint(attempt), fmt.Sprintf("m%d", i)), TLS: pki}
			m.ClientPort, m.PeerPort = distinct(), distinct()
			ms = append(ms, m)
		}
		err := etcdproc.StartCluster(ms)
		if err == nil {
			t.Cleanup(func() { etcdproc.StopAll(ms) })
			return ms
		}
		etcdproc.StopAll(ms)
		// A port found free can be taken by a test of another package
		// before etcd binds it (seen in make test): new ports, again.
		if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			t.Logf("etcd lost a free port to another process; starting again: %v", err)
			continue
		}
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	addr, err := freeLocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := strings.Cut(addr, ":")
	n, _ := strconv.Atoi(p)
	return n
}

// A client of all three members goes on working, its lease kept alive and
// its watch delivering, when a follower and then the leader are SIGKILLed
// (and the follower restarted: two of three keep the quorum).
func TestDialConfigSurvivesAKilledMember(t *testing.T) {
	ms, cli, sess := threeMembersWithSession(t)
	key := Root + "survive/" + uniqueJob(t)
	watch := cli.Watch(t.Context(), key)
	putFor(t, cli, key, 0, time.Second)

	follower := followerOf(t, cli, ms)
	t.Logf("SIGKILL the follower %s", follower.Name)
	follower.Kill()
	// A write in flight on the killed member's connection fails (EOF): the
	// client does not resend a put that may have been applied. Callers
	// retry; the next write goes to a live member.
	waitWritable(t, cli, key, 3*time.Second)
	putFor(t, cli, key, 1000, 6*time.Second) // longer than the session's TTL
	if err := follower.Restart(); err != nil {
		t.Fatal(err)
	}

	leader := leaderOf(t, cli, ms)
	t.Logf("SIGKILL the leader %s", leader.Name)
	leader.Kill()
	// A write the dead leader had accepted is lost: etcd answers "request
	// timed out" after its request timeout (7 s here). Callers retry; after
	// the election every write goes through.
	waitWritable(t, cli, key, 10*time.Second)
	last := putFor(t, cli, key, 2000, 3*time.Second)

	select {
	case <-sess.Done():
		t.Errorf("the etcd session ended after one member of three was killed")
	default:
	}
	assertWatched(t, watch, strconv.Itoa(last))
}

// putFor puts increasing values from first for d; every put must succeed
// within a second. It returns the last value put.
func putFor(t *testing.T, cli *clientv3.Client, key string, first int, d time.Duration) int {
	t.Helper()
	v := first
	for end := time.Now().Add(d); time.Now().Before(end); v++ {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := cli.Put(ctx, key, strconv.Itoa(v))
		cancel()
		if err != nil {
			t.Fatalf("put %d: %v", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return v - 1
}

// waitWritable retries a put until one succeeds, within d.
func waitWritable(t *testing.T, cli *clientv3.Client, key string, d time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		_, err := cli.Put(ctx, key, "probe")
		cancel()
		if err == nil {
			t.Logf("writable again %s after the kill", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > d {
			t.Fatalf("no write went through in %s after a member was killed: %v", d, err)
		}
		t.Logf("a write failed right after the kill: %v", err)
	}
}

func assertWatched(t *testing.T, watch clientv3.WatchChan, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case resp := <-watch:
			for _, ev := range resp.Events {
				if string(ev.Kv.Value) == want {
					return
				}
			}
		case <-deadline:
			t.Fatalf("the watch did not deliver the last put (%s) after the kills", want)
		}
	}
}

func followerOf(t *testing.T, cli *clientv3.Client, ms []*etcdproc.Member) *etcdproc.Member {
	t.Helper()
	leader := leaderOf(t, cli, ms)
	for _, m := range ms {
		if m != leader {
			return m
		}
	}
	return nil
}

func leaderOf(t *testing.T, cli *clientv3.Client, ms []*etcdproc.Member) *etcdproc.Member {
	t.Helper()
	for _, m := range ms {
		st, err := cli.Status(t.Context(), m.ClientURL())
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no member is the leader")
	return nil
}

// An etcd that wants TLS with client certificates and a user: DialConfig
// gets in with the right files and password, and says why it cannot with
// a wrong password or without TLS.
func TestDialConfigTLSAndUser(t *testing.T) {
	etcdBinary(t)
	pki, err := etcdproc.NewPKI(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ms := loopbackMembers(t, 1, pki)
	good := EtcdConfig{Endpoints: []string{strings.TrimPrefix(ms[0].ClientURL(), "https://")},
		CACert: pki.CACert, Cert: pki.ClientCert, Key: pki.ClientKey}
	enableAuth(t, good, "root", "s3cret")

	good.User, good.Password = "root", "s3cret"
	cli, err := DialConfig(t.Context(), good, nil)
	if err != nil {
		t.Fatalf("dial with TLS files and password: %v", err)
	}
	if _, err := cli.Put(t.Context(), Root+"tls-"+uniqueJob(t), "ok"); err != nil {
		t.Errorf("put over TLS as root: %v", err)
	}
	cli.Close()

	wrong := good
	wrong.Password = "guess"
	plain := EtcdConfig{Endpoints: []string{"http://" + strings.TrimPrefix(ms[0].ClientURL(), "https://")}, User: "root", Password: "s3cret"}
	mixed := good
	mixed.Endpoints = plain.Endpoints
	for _, c := range []struct {
		name string
		cfg  EtcdConfig
		want string
	}{
		{"wrong password", wrong, "authentication failed"},
		{"no TLS", plain, "etcd http://"},
		{"http endpoint with TLS files", mixed, "plain http"},
		{"password without user", EtcdConfig{Endpoints: good.Endpoints, Password: "x"}, "--etcd-user"},
		{"cert without key", EtcdConfig{Endpoints: good.Endpoints, Cert: pki.ClientCert}, "--etcd-key"},
		{"missing CA file", EtcdConfig{Endpoints: good.Endpoints, CACert: "/nonexistent/ca.pem"}, "/nonexistent/ca.pem"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		cli, err := DialConfig(ctx, c.cfg, nil)
		cancel()
		if err == nil {
			cli.Close()
			t.Errorf("%s: dial succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
}

// enableAuth adds user (with the root role) and turns etcd's auth on.
func enableAuth(t *testing.T, c EtcdConfig, user, password string) {
	t.Helper()
	cli, err := DialConfig(t.Context(), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.UserAdd(t.Context(), user, password); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.UserGrantRole(t.Context(), user, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.AuthEnable(t.Context()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// A leader's fenced commits go through while a follower and then the etcd
// leader are SIGKILLed: a commit whose member died under it is sent again,
// none fails.
func TestFencedCommitSurvivesAKilledMember(t *testing.T) {
	ms, cli, sess := threeMembersWithSession(t)
	job := uniqueJob(t)
	lead, err := Campaign(t.Context(), cli, sess, Root+"fenced/"+job, "me")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	n := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			err := lead.Commit(ctx, clientv3.OpPut(Root+"fenced/"+job+"/v", strconv.Itoa(n)))
			cancel()
			if err != nil {
				done <- fmt.Errorf("commit %d: %w", n, err)
				return
			}
			n++
		}
	}()
	time.Sleep(500 * time.Millisecond)
	follower := followerOf(t, cli, ms)
	t.Logf("SIGKILL the follower %s", follower.Name)
	follower.Kill()
	time.Sleep(time.Second)
	if err := follower.Restart(); err != nil {
		t.Fatal(err)
	}
	leader := leaderOf(t, cli, ms)
	t.Logf("SIGKILL the leader %s", leader.Name)
	leader.Kill()
	time.Sleep(9 * time.Second) // past etcd's request timeout for the lost leader
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d fenced commits, none failed", n)
}
