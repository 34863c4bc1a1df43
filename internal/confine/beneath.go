package confine

import (
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) answered ENOSYS (a kernel before 5.6, or
// a seccomp filter that refuses it): from then on paths are walked by hand.
// Tests set it to exercise the walk.
var noOpenat2 atomic.Bool

// maxLinks bounds the symlinks one walk follows, as the kernel's ELOOP does.
const maxLinks = 40

// beneath opens rel (relative to dirfd) without leaving dirfd: openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS (and RESOLVE_NO_SYMLINKS when
// noLinks), or walk where openat2 is missing. Leaving dirfd, through ".." or
// a symlink (an absolute symlink always leaves), is EXDEV; a symlink under
// noLinks is ELOOP. The fd is close-on-exec.
func beneath(dirfd int, rel string, flags int, perm uint32, noLinks bool) (int, error) {
	if rel == "" {
		rel = "."
	}
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.O_CREAT != 0 {
			how.Mode = uint64(perm)
		}
		if noLinks {
			how.Resolve |= unix.RESOLVE_NO_SYMLINKS
		}
		for try := 0; ; try++ {
			fd, err := unix.Openat2(dirfd, rel, &how)
			// EAGAIN: a rename raced the lookup, which the kernel will not
			// vouch for; try again a few times.
			if (err == unix.EAGAIN && try < 8) || err == unix.EINTR {
				continue
			}
			if err != unix.ENOSYS {
				return fd, err
			}
			break
		}
		noOpenat2.Store(true)
	}
	return walk(dirfd, rel, flags, perm, noLinks)
}

// walk is beneath by hand: one component at a time, each opened with
// O_NOFOLLOW from the directory before it; ".." pops what the walk itself
// opened (never the file system's parent of dirfd), and a relative
// symlink's target is walked in its place. A component swapped for a
// symlink between the check and the open fails with ELOOP.
func walk(dirfd int, rel string, flags int, perm uint32, noLinks bool) (int, error) {
	start, err := unix.FcntlInt(uintptr(dirfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	stack := []int{start}
	defer func() {
		for _, fd := range stack {
			unix.Close(fd)
		}
	}()
	todo, links := strings.Split(rel, "/"), 0
	for len(todo) > 0 {
		comp, cur := todo[0], stack[len(stack)-1]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return -1, unix.EXDEV
			}
			unix.Close(cur)
			stack = stack[:len(stack)-1]
			continue
		}
		var st unix.Stat_t
		err := unix.Fstatat(cur, comp, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if links++; noLinks || links > maxLinks {
				return -1, unix.ELOOP
			}
			target, err := readlinkat(cur, comp)
			if err != nil {
				return -1, err
			}
			if strings.HasPrefix(target, "/") {
				return -1, unix.EXDEV
			}
			todo = append(strings.Split(target, "/"), todo...)
			continue
		}
		if isLast(todo) {
			return unix.Openat(cur, comp, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		}
		if err != nil {
			return -1, err
		}
		fd, err := unix.Openat(cur, comp, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		stack = append(stack, fd)
	}
	return unix.Openat(stack[len(stack)-1], ".", flags|unix.O_CLOEXEC, perm)
}

// isLast reports whether what is left of a walk names nothing ("" or "."),
// so that the component just read is the one to open with the caller's
// flags.
func isLast(todo []string) bool {
	for _, c := range todo {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
