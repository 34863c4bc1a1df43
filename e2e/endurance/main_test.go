package endurance

import (
	"os"
	"sync"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// allParallel is how many tests of this package there are: every one
// calls t.Parallel, and all start at once (TestParallelCountsTheTests).
const allParallel = 7

func TestMain(m *testing.M) { os.Exit(e2erig.Main(m, allParallel)) }

// working is held by the tests that train all along (the master deaths,
// the async trainer's stall, the soak), one at a time: on 2 cores, three
// clusters training at once beside e2e would slow each step past the
// waits' limits. The etcd outages do not take it: their clusters idle
// while etcd is stopped.
var working sync.Mutex

func trainsAllAlong(t *testing.T) {
	working.Lock()
	t.Cleanup(working.Unlock)
}
