package wait

import (
	"fmt"
	"testing"
	"time"
)

// The poll interval starts short, so that unit tests of in-process parts
// see a change within milliseconds, and grows to maxInterval, so that a
// long wait on an observation that runs a process (gctl) does not take a
// core from the cluster it watches.
const (
	firstInterval = 10 * time.Millisecond
	maxInterval   = 200 * time.Millisecond
)

// Until polls observe until it reports done or timeout passes. observe
// returns whether the awaited thing happened and a description of what it
// saw; the error after a timeout names what was awaited and that last
// description.
func Until(timeout time.Duration, what string, observe func() (done bool, last string)) error {
	deadline := time.Now().Add(timeout)
	interval := firstInterval
	for {
		done, last := observe()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s; last observed: %s", timeout, what, last)
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
	}
}

// Eventually is Until that fails t on timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, observe func() (done bool, last string)) {
	t.Helper()
	if err := Until(timeout, what, observe); err != nil {
		t.Fatal(err)
	}
}
