package coord

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// HostID names the PID space this process lives in, so that a record
// carrying a PID says where that PID means something. It is the kernel's
// boot id (another machine, or this one rebooted, has another) and the
// inode of this process's PID namespace (another container on the same
// kernel has another): "<boot id>/pidns:<inode>". Two processes with the
// same HostID see the same PIDs, so one may judge by kill(pid, 0) whether
// the other is alive; with different ones a PID says nothing.
//
// The network namespace is deliberately not part of it: it changes nothing
// about what a PID names (the hosts of a netcluster test differ only by
// network namespace and do share their PIDs), and adding it would only
// make a dead holder wait out its TTL where it could be revoked at once.
// The PID namespace inode is unique among live namespaces of one boot; if
// the namespace of a holder is gone, so is the holder, and a reused inode
// can only make a dead holder look alive (it then expires with its lease).
//
// HostID is "" when /proc does not tell; no holder is then local.
func HostID() string { return hostID() }

var hostID = sync.OnceValue(func() string { return readHostID("/proc") })

// readHostID reads the HostID from a proc file system mounted at proc.
func readHostID(proc string) string {
	boot, err := os.ReadFile(filepath.Join(proc, "sys/kernel/random/boot_id"))
	if err != nil {
		return ""
	}
	link, err := os.Readlink(filepath.Join(proc, "self/ns/pid")) // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	inode, ok := strings.CutPrefix(link, "pid:[")
	inode, ok2 := strings.CutSuffix(inode, "]")
	id := strings.TrimSpace(string(boot))
	if !ok || !ok2 || inode == "" || id == "" {
		return ""
	}
	return id + "/pidns:" + inode
}

// IsLocalHost reports whether host (a HostID from a record) is this
// process's: only then may a PID in that record be checked here. An
// unknown host ("") is never local.
func IsLocalHost(host string) bool {
	return host != "" && host == HostID()
}

// NetHostID is HostID with this process's network namespace
// ("<HostID>/netns:<inode>"): two processes with the same one share PIDs,
// files and the loopback network, so one may reach the other through a
// unix socket where it would through TCP on the same host; in a
// netcluster test's hosts, which share PIDs and files, a socket would
// bypass the network a test cuts. "" when /proc does not tell.
func NetHostID() string { return netHostID() }

var netHostID = sync.OnceValue(func() string { return readNetHostID("/proc") })

// readNetHostID reads the NetHostID from a proc file system mounted at proc.
func readNetHostID(proc string) string {
	host := readHostID(proc)
	link, err := os.Readlink(filepath.Join(proc, "self/ns/net")) // "net:[4026531840]"
	inode, ok := strings.CutPrefix(link, "net:[")
	inode, ok2 := strings.CutSuffix(inode, "]")
	if host == "" || err != nil || !ok || !ok2 || inode == "" {
		return ""
	}
	return host + "/netns:" + inode
}
