package coord

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestHostIDNamesBootAndPIDNamespace(t *testing.T) {
	id := HostID()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(boot)) + "/pidns:" + strings.Trim(strings.TrimPrefix(link, "pid"), ":[]")
	if id != want {
		t.Errorf("HostID = %q, want %q", id, want)
	}
	if !IsLocalHost(id) || IsLocalHost("") || IsLocalHost(foreignHost) {
		t.Error("IsLocalHost: want true only for our own HostID")
	}
}

// A proc without the files (a broken or absent /proc) gives no identity,
// so that nothing is judged local by accident.
func TestReadHostIDWithoutProc(t *testing.T) {
	dir := t.TempDir()
	if got := readHostID(dir); got != "" {
		t.Errorf("readHostID(empty dir) = %q, want \"\"", got)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys/kernel/random"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/kernel/random/boot_id"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readHostID(dir); got != "" {
		t.Errorf("readHostID without ns/pid = %q, want \"\"", got)
	}
}

// A process in a PID namespace of its own has another HostID, though it
// shares the machine (and its boot id): its PIDs are not ours. The test
// binary runs itself under unshare to print its HostID there.
func TestHostIDDiffersInAnotherPIDNamespace(t *testing.T) {
	if os.Getenv(printHostIDEnv) != "" {
		fmt.Println(HostID())
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED, NOT TESTED: needs root for a PID namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: %v", err)
	}
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", os.Args[0], "-test.run=^TestHostIDDiffersInAnotherPIDNamespace$")
	cmd.Env = append(os.Environ(), printHostIDEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unshare: %v", err)
	}
	theirs, _, _ := strings.Cut(string(out), "\n")
	boot, _, _ := strings.Cut(HostID(), "/")
	if theirs == HostID() || !strings.HasPrefix(theirs, boot+"/pidns:") {
		t.Errorf("HostID in a PID namespace of its own = %q, ours %q: want the same boot, another namespace", theirs, HostID())
	}
	if IsLocalHost(theirs) {
		t.Errorf("IsLocalHost(%q) = true for another PID namespace", theirs)
	}
}

const printHostIDEnv = "GTRAIN_TEST_PRINT_HOSTID"

// NetHostID adds the network namespace to HostID: processes of one PID
// space in two network namespaces (a netcluster test's hosts) differ.
func TestNetHostIDAddsTheNetworkNamespace(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sys/kernel/random"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "self/ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/kernel/random/boot_id"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pid:[7]", filepath.Join(dir, "self/ns/pid")); err != nil {
		t.Fatal(err)
	}
	if got := readNetHostID(dir); got != "" {
		t.Errorf("readNetHostID without ns/net = %q, want \"\"", got)
	}
	if err := os.Symlink("net:[9]", filepath.Join(dir, "self/ns/net")); err != nil {
		t.Fatal(err)
	}
	if got, want := readNetHostID(dir), "b/pidns:7/netns:9"; got != want {
		t.Errorf("readNetHostID = %q, want %q", got, want)
	}
	if !strings.HasPrefix(NetHostID(), HostID()+"/netns:") {
		t.Errorf("NetHostID %q does not extend HostID %q", NetHostID(), HostID())
	}
}
