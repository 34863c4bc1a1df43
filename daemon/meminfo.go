package daemon

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// totalMemory is the machine's memory in bytes from /proc/meminfo, or 0 when
// it cannot be read (not Linux): the node list then shows the memory as
// unknown rather than the agent refusing to start.
func totalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemTotal(f)
}

// parseMemTotal reads the "MemTotal:  16318412 kB" line.
func parseMemTotal(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n
	}
	return 0
}
