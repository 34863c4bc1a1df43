package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The dynamic range, as systemd's DynamicUser takes it: free of the
// distribution's system and regular users and of nobody (65534).
const (
	FirstUID = 61184
	LastUID  = 65519
)

// Why claim files on the node rather than etcd: a uid matters where the
// process and its files are, on one node; the claim must work for the
// submit-time declare and for every role of the job on the node, each as
// a separate process; an O_EXCL create is atomic without a lease to keep.
// Jobs on different nodes may get different uids for the same job, which
// shared storage does not notice because nothing the program writes
// outlives it (its scratch is private; the model and checkpoints are
// written by the roles).

// startUID is where the job's search begins: the same for a name on every
// node, so that most jobs get the same uid everywhere.
func startUID(job string) int {
	h := fnv.New32a()
	h.Write([]byte(job))
	return int(h.Sum32() % (LastUID - FirstUID + 1))
}

// pickUID returns the first uid, from the job's start, that claim accepts;
// claim says whether uid is now the job's (free and taken, or already its).
func pickUID(job string, claim func(uid int) (bool, error)) (int, error) {
	n := LastUID - FirstUID + 1
	start := startUID(job)
	for i := range n {
		uid := FirstUID + (start+i)%n
		ok, err := claim(uid)
		if err != nil {
			return 0, err
		}
		if ok {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("sandbox: all %d uids of %d-%d are claimed by other jobs; purge finished jobs' claims in the data dir's sandbox/uids", n, FirstUID, LastUID)
}

func uidDir(dataDir string) string { return filepath.Join(dataDir, "sandbox", "uids") }

// oneOffOwner is a claim owner no other claim shares: once-PID-RANDOM,
// the pid telling SweepOneOff whether its claimer still lives.
func oneOffOwner() string {
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("once-%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// SweepOneOff removes the one-off claims (oneOffOwner) of the data dir
// whose claiming process is gone: those of a declare whose agent was
// killed before it could release them. A live claimer's claim stays, and
// a dead one's file nobody else writes, so the sweep races with nothing.
func SweepOneOff(dataDir string) error {
	return removeClaims(dataDir, func(owner string) bool { return strings.HasPrefix(owner, "once-") && creatorGone(owner) })
}

// ReleaseJob removes the uid claims of every incarnation of job
// (JobOwner's job@rev) in the data dir: its record is purged, no role of
// it runs here any more.
func ReleaseJob(dataDir, job string) error {
	return removeClaims(dataDir, func(owner string) bool { return strings.HasPrefix(owner, job+"@") })
}

// removeClaims removes the claims of the data dir whose owner done says.
func removeClaims(dataDir string, done func(owner string) bool) error {
	dir := uidDir(dataDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox: uid claims: %w", err)
	}
	var errs []error
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if b, err := os.ReadFile(p); err == nil && done(strings.TrimSuffix(string(b), "\n")) {
			errs = append(errs, os.Remove(p))
		}
	}
	return errors.Join(errs...)
}

// ClaimUID gives job its uid on this node: a file dir/UID holds the job's
// name. A uid with an account in the user database is skipped.
func ClaimUID(dir, job string) (int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("sandbox: uid claims: %w", err)
	}
	return pickUID(job, func(uid int) (bool, error) { return claimFile(filepath.Join(dir, strconv.Itoa(uid)), job, uid) })
}

func claimFile(path, job string, uid int) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if _, lerr := user.LookupId(strconv.Itoa(uid)); lerr == nil {
			f.Close() // a real account: keep the claim so nobody takes it
			return false, os.WriteFile(path, []byte("\x00account\n"), 0o600)
		}
		_, werr := f.WriteString(job + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return werr == nil, werr
	}
	if !errors.Is(err, os.ErrExist) {
		return false, fmt.Errorf("sandbox: claim uid %d: %w", uid, err)
	}
	b, err := os.ReadFile(path)
	if err == nil && len(b) == 0 {
		time.Sleep(20 * time.Millisecond) // another process is writing it
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return false, fmt.Errorf("sandbox: read uid claim %s: %w", path, err)
	}
	return strings.TrimSuffix(string(b), "\n") == job, nil
}
