package program

import (
	"strings"
	"sync"
)

// stderrTail keeps the last bytes a program wrote to stderr: enough to show
// a Python traceback's last lines in a job's status without holding a
// chatty program's whole output.
type stderrTail struct {
	mu   sync.Mutex
	max  int
	data []byte
}

func newStderrTail(max int) *stderrTail { return &stderrTail{max: max} }

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.data = append(t.data, p...)
	if over := len(t.data) - t.max; over > 0 {
		t.data = append(t.data[:0], t.data[over:]...)
	}
	return len(p), nil
}

// String is the tail, starting at a line boundary when one is in it.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.data)
	if len(t.data) >= t.max {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.ToValidUTF8(s, "?")
}
