package daemon

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestWorkerRole(t *testing.T) {
	for _, tc := range []struct {
		worker string
		role   string
		index  int
	}{
		{"master", "master", -1},
		{"pserver-0", "pserver", 0},
		{"trainer-12", "trainer", 12},
	} {
		role, index, err := workerRole(tc.worker)
		if err != nil || role != tc.role || index != tc.index {
			t.Errorf("workerRole(%q) = %q, %d, %v; want %q, %d", tc.worker, role, index, err, tc.role, tc.index)
		}
	}
	for _, bad := range []string{"", "trainer", "trainer-", "trainer-01", "trainer--1", "pserver-x", "coach-0", "master-0"} {
		if _, _, err := workerRole(bad); !errors.Is(err, ErrUnknownWorker) {
			t.Errorf("workerRole(%q) = %v, want ErrUnknownWorker", bad, err)
		}
	}
}

func TestRoleArgs(t *testing.T) {
	eps := []string{"http://127.0.0.1:2379", "http://10.0.0.2:2379"}
	got, err := roleArgs("fit", "trainer-1", eps, "/data", "n1", 42)
	want := []string{"trainer", "--job", "fit", "--job-rev", "42", "--etcd-endpoints", "http://127.0.0.1:2379,http://10.0.0.2:2379",
		"--data-dir", "/data", "--node", "n1", "--index", "1"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("roleArgs(trainer-1) = %q, %v; want %q", got, err, want)
	}
	got, err = roleArgs("fit", "master", eps[:1], "/data", "n1", 42)
	if err != nil || slices.Contains(got, "--index") || got[0] != "master" {
		t.Errorf("roleArgs(master) = %q, %v; want no --index", got, err)
	}
}

func TestIsRoleCmdline(t *testing.T) {
	cmdline := func(args ...string) []byte { return []byte(strings.Join(args, "\x00") + "\x00") }
	args, _ := roleArgs("fit", "pserver-1", []string{"http://e:2379"}, "/d", "n1", 42)
	own := cmdline(append([]string{"/usr/bin/gtraind"}, args...)...)
	for _, tc := range []struct {
		name    string
		cmdline []byte
		job     string
		worker  string
		want    bool
	}{
		{"the role itself", own, "fit", "pserver-1", true},
		{"another index", own, "fit", "pserver-0", false},
		{"another job", own, "fit2", "pserver-1", false},
		{"another role", own, "fit", "trainer-1", false},
		{"--flag=value form", cmdline("gtraind", "master", "--job=fit"), "fit", "master", true},
		{"a reused pid", cmdline("/bin/sleep", "100"), "fit", "master", false},
		{"a zombie", nil, "fit", "master", false},
	} {
		if got := isRoleCmdline(tc.cmdline, tc.job, tc.worker); got != tc.want {
			t.Errorf("%s: isRoleCmdline = %v, want %v", tc.name, got, tc.want)
		}
	}
}
