package coord

import (
	"context"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
)

func TestKeptGlobalSteps(t *testing.T) {
	cli := dialTest(t)
	ctx := context.Background()
	job := "kept-global-steps"
	steps, err := KeptGlobalSteps(ctx, cli, job)
	if err != nil || steps != nil {
		t.Fatalf("before any global checkpoint: %v, %v; want none, nil", steps, err)
	}
	g := schema.GlobalCheckpoint{Step: 300, Steps: []int64{100, 200, 300}}
	if _, err := cli.Put(ctx, GlobalCheckpointKey(job), MustJSON(g)); err != nil {
		t.Fatal(err)
	}
	if steps, err = KeptGlobalSteps(ctx, cli, job); err != nil || !slices.Equal(steps, g.Steps) {
		t.Fatalf("got %v, %v; want %v", steps, err, g.Steps)
	}
	if _, err := cli.Put(ctx, GlobalCheckpointKey(job), "{not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := KeptGlobalSteps(ctx, cli, job); err == nil {
		t.Fatal("an undecodable record gave no error: a pruner would delete what it must keep")
	}
}
