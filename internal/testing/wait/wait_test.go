package wait

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceObserved(t *testing.T) {
	n := 0
	err := Until(5*time.Second, "the third look", func() (bool, string) {
		n++
		return n == 3, strconv.Itoa(n)
	})
	if err != nil || n != 3 {
		t.Fatalf("Until: %v after %d looks, want nil after 3", err, n)
	}
}

// The timeout names what was awaited and the last observation.
func TestUntilTimeoutSaysWhatAndLast(t *testing.T) {
	n := 0
	err := Until(50*time.Millisecond, "the impossible", func() (bool, string) {
		n++
		return false, "look " + strconv.Itoa(n)
	})
	if err == nil {
		t.Fatal("Until returned nil for a condition that never holds")
	}
	for _, want := range []string{"the impossible", "look " + strconv.Itoa(n)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}
