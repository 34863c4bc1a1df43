package supervisor

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/rolecfg"
)

func TestRoleArgs(t *testing.T) {
	l := roleLaunch{etcd: coord.EtcdConfig{Endpoints: []string{"http://127.0.0.1:2379", "http://10.0.0.2:2379"}},
		dataDir: "/data", node: "n1", advertise: "10.0.0.1"}
	got, err := l.args("fit", "trainer-1", 42)
	want := []string{"trainer", "--job", "fit", "--job-rev", "42", "--data-dir", "/data", "--node", "n1",
		"--etcd-endpoints", "http://127.0.0.1:2379,http://10.0.0.2:2379", "--job-credential", "/data/jobs/fit/credential", "--index", "1"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("args(trainer-1) = %q, %v; want %q (a trainer serves nothing: no --listen)", got, err, want)
	}
	got, err = l.args("fit", "master", 42)
	if err != nil || slices.Contains(got, "--index") || got[0] != "master" || !hasFlag(got, "--listen", "10.0.0.1:0") {
		t.Errorf("args(master) = %q, %v; want no --index, --listen 10.0.0.1:0", got, err)
	}
	l.advertise = "fd00::1"
	l.etcd = coord.EtcdConfig{Endpoints: []string{"e:2379"}, CACert: "/ca.pem", Cert: "/c.pem", Key: "/k.pem", User: "gtrain", Password: "s3cret"}
	got, err = l.args("fit", "pserver-0", 42)
	for _, f := range [][2]string{{"--listen", "[fd00::1]:0"}, {"--etcd-cacert", "/ca.pem"}, {"--etcd-cert", "/c.pem"},
		{"--etcd-key", "/k.pem"}, {"--etcd-user", "gtrain"}, {"--index", "0"}} {
		if err != nil || !hasFlag(got, f[0], f[1]) {
			t.Errorf("args(pserver-0) = %q, %v; want %s %s", got, err, f[0], f[1])
		}
	}
	if slices.ContainsFunc(got, func(a string) bool { return strings.Contains(a, "s3cret") }) {
		t.Errorf("args(pserver-0) = %q: the etcd password is on the command line", got)
	}
}

// The etcd password reaches a role as the path of the agent's 0600 file,
// never in its environment or on its command line; systemd's variables
// and an inherited password do not reach it either.
func TestRoleCommandEnv(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "/run/systemd/notify")
	t.Setenv("WATCHDOG_USEC", "1000000")
	t.Setenv(rolecfg.EtcdPasswordEnv, "inherited")
	t.Setenv("OMP_NUM_THREADS", "8")
	l := roleLaunch{exe: "/bin/true", dataDir: "/data", etcd: coord.EtcdConfig{Endpoints: []string{"e:2379"}, User: "u", Password: "s3cret"}}
	cmd, err := l.command("fit", "trainer-0", 42, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// OpenBLAS on one thread per call, whatever the agent's environment
	// says (exec keeps the last of duplicate variables).
	for _, name := range []string{"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"} {
		last := ""
		for _, kv := range cmd.Env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				last = v
			}
		}
		if last != "1" {
			t.Errorf("a role's %s is %q; want 1", name, last)
		}
	}
	if !hasFlag(cmd.Args, "--etcd-password-file", rolecfg.EtcdPasswordPath("/data")) {
		t.Errorf("command line %q lacks --etcd-password-file %s", cmd.Args, rolecfg.EtcdPasswordPath("/data"))
	}
	for _, v := range append([]string{rolecfg.EtcdPasswordEnv}, systemdEnv...) {
		if countPrefix(cmd.Env, v+"=") != 0 {
			t.Errorf("a role inherits %s", v)
		}
	}
	secret := func(w string) bool { return strings.Contains(w, "s3cret") || strings.Contains(w, "inherited") }
	if slices.ContainsFunc(cmd.Args, secret) || slices.ContainsFunc(cmd.Env, secret) {
		t.Errorf("command line %q or environment %q carries the password", cmd.Args, cmd.Env)
	}
	l.etcd.Password = ""
	if cmd, _ = l.command("fit", "trainer-0", 42, nil, nil); slices.Contains(cmd.Args, "--etcd-password-file") {
		t.Errorf("an agent without a password names a password file: %q", cmd.Args)
	}
}

// A role sees the GPUs placement gave it, and none without: never the
// devices the agent's own environment names.
func TestRoleCommandPinsGPUs(t *testing.T) {
	t.Setenv(cudaVisibleDevices, "0,1,2,3")
	l := roleLaunch{exe: "/bin/true"}
	for _, tc := range []struct {
		gpus []int
		want string
	}{{[]int{1, 3}, "1,3"}, {[]int{0}, "0"}, {nil, ""}} {
		cmd, err := l.command("fit", "trainer-0", 42, tc.gpus, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := countPrefix(cmd.Env, cudaVisibleDevices+"="); n != 1 || !slices.Contains(cmd.Env, cudaVisibleDevices+"="+tc.want) {
			t.Errorf("gpus %v: %d %s entries in %q, want one, %q", tc.gpus, n, cudaVisibleDevices, cmd.Env, tc.want)
		}
	}
}

func countPrefix(env []string, prefix string) int {
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, prefix) {
			n++
		}
	}
	return n
}

func hasFlag(args []string, flag, value string) bool {
	i := slices.Index(args, flag)
	return i >= 0 && i+1 < len(args) && args[i+1] == value
}

func TestIsRoleCmdline(t *testing.T) {
	cmdline := func(args ...string) []byte { return []byte(strings.Join(args, "\x00") + "\x00") }
	args, _ := roleLaunch{etcd: coord.EtcdConfig{Endpoints: []string{"http://e:2379"}}, dataDir: "/d", node: "n1"}.args("fit", "pserver-1", 42)
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
