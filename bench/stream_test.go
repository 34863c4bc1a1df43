package bench

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestStreamCeilingRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		kind     string
		n, iters int
	}{{"lbfgs", 10, 1}, {"sgd", 0, 1}, {"adam", 10, 0}} {
		if _, err := StreamCeiling(c.kind, c.n, c.iters); err == nil {
			t.Errorf("StreamCeiling(%q, %d, %d) succeeded", c.kind, c.n, c.iters)
		}
	}
}

// The ceiling loops must touch every element (the vector part and the
// scalar tail) with the traffic they claim: after k sweeps each written
// array has gained k*g.
func TestStreamSweepsTouchEveryElement(t *testing.T) {
	for _, n := range []int{1, 7, 8, 15, 16, 17, 100} {
		a := [][]float32{make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)}
		for i := range a[1] {
			a[1][i] = 1
		}
		streamSGD(a[:2])
		streamSGDPlain(a[:2])
		streamAdam(a)
		for i := 0; i < n; i++ {
			if a[0][i] != 3 || a[2][i] != 1 || a[3][i] != 1 || a[1][i] != 1 {
				t.Fatalf("n=%d i=%d: p=%v m=%v v=%v g=%v, want 3 1 1 1", n, i, a[0][i], a[2][i], a[3][i], a[1][i])
			}
		}
	}
}

func TestStreamCeilingMeasures(t *testing.T) {
	for _, kind := range []string{"sgd", "adam"} {
		if v, err := StreamCeiling(kind, 4096, 2); err != nil || !(v > 0) {
			t.Errorf("StreamCeiling(%s) = %v, %v; want > 0", kind, v, err)
		}
	}
}

func TestTCPLoopbackMeasures(t *testing.T) {
	for _, streams := range []int{1, 4} {
		if v, err := TCPLoopbackMBps(64<<20, streams); err != nil || !(v > 0) {
			t.Errorf("TCPLoopbackMBps(%d streams) = %v, %v; want > 0", streams, v, err)
		}
	}
	if _, err := TCPLoopbackMBps(1, 0); err == nil {
		t.Error("TCPLoopbackMBps with 0 streams succeeded")
	}
}

func TestGroupCommitPutPerSec(t *testing.T) {
	e, err := StartEtcd()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	v, err := GroupCommitPutPerSec(e, 256, 16)
	if err != nil || !(v > 0) {
		t.Fatalf("GroupCommitPutPerSec = %v, %v; want > 0", v, err)
	}
	resp, err := e.Cli.Get(t.Context(), "/bench/group/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 256 {
		t.Fatalf("group commit wrote %d keys (%v), want every one of 16 x 16", resp.Count, err)
	}
}
