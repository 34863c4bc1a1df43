package checkpoint

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// recorderContract runs the same checks against any Recorder.
func recorderContract(t *testing.T, r Recorder) {
	t.Helper()
	ctx := context.Background()
	if _, v, found, err := r.Load(ctx, 4); err != nil || found || v != 0 {
		t.Fatalf("empty Load = v%d found=%v err=%v", v, found, err)
	}
	rec1 := Record{Index: 4, Step: 10, File: pserverFile(4, 10), SHA256: "aa"}
	if _, err := r.CompareAndSwap(ctx, rec1, 99); !errors.Is(err, ErrConflict) {
		t.Fatalf("CAS on absent key with version 99: err = %v, want ErrConflict", err)
	}
	v1, err := r.CompareAndSwap(ctx, rec1, 0)
	if err != nil || v1 <= 0 {
		t.Fatalf("create: v=%d err=%v", v1, err)
	}
	got, v, found, err := r.Load(ctx, 4)
	if err != nil || !found || v != v1 || got != rec1 {
		t.Fatalf("Load after create = %+v v%d found=%v err=%v; want %+v v%d", got, v, found, err, rec1, v1)
	}
	if _, err := r.CompareAndSwap(ctx, rec1, 0); !errors.Is(err, ErrConflict) {
		t.Fatalf("second create: err = %v, want ErrConflict", err)
	}
	rec2 := Record{Index: 4, Step: 20, File: pserverFile(4, 20), SHA256: "bb"}
	v2, err := r.CompareAndSwap(ctx, rec2, v1)
	if err != nil || v2 <= v1 {
		t.Fatalf("update: v=%d err=%v (previous %d)", v2, err, v1)
	}
	if _, err := r.CompareAndSwap(ctx, Record{Index: 4, Step: 30}, v1); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale update: err = %v, want ErrConflict", err)
	}
	if got, v, _, _ := r.Load(ctx, 4); got != rec2 || v != v2 {
		t.Fatalf("stale update changed the record to %+v v%d", got, v)
	}
	if _, _, found, _ := r.Load(ctx, 5); found {
		t.Fatal("record of index 4 leaked into index 5")
	}
}

func TestMemRecorderContract(t *testing.T) {
	recorderContract(t, NewMemRecorder())
	var zero MemRecorder
	recorderContract(t, &zero)
}

func TestMemRecorderConcurrentCASHasOneWinner(t *testing.T) {
	r := NewMemRecorder()
	ctx := context.Background()
	const writers = 32
	var wg sync.WaitGroup
	wins := make(chan int, writers)
	for i := range writers {
		wg.Go(func() {
			if _, err := r.CompareAndSwap(ctx, Record{Index: 0, Step: int64(i)}, 0); err == nil {
				wins <- i
			} else if !errors.Is(err, ErrConflict) {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Fatalf("%d writers won the create, want exactly 1", n)
	}
}

func TestMemRecorderHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewMemRecorder()
	if _, _, _, err := r.Load(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load: %v", err)
	}
	if _, err := r.CompareAndSwap(ctx, Record{}, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("CAS: %v", err)
	}
}
