package controlapi

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// A recommender's pserver count may change within its bounds like any sync
// job's (its rows are re-cut with the dense parameters); outside them, or
// in async mode, it is refused naming why.
func TestCheckPserverScaleRecommender(t *testing.T) {
	spec := jobspec.Spec{Name: "rec", Mode: jobspec.ModeSync, Pservers: 2, PserversMin: 1, PserversMax: 3,
		Model: jobspec.ModelSpec{Kind: jobspec.KindRecommender, Dim: 8, Outputs: 1}}
	rec := &schema.JobRecord{Spec: spec}
	for _, m := range []int{1, 2, 3} {
		if err := checkPserverScale(rec, "rec", m); err != nil {
			t.Errorf("--pservers %d: %v, want accepted", m, err)
		}
	}
	if err := checkPserverScale(rec, "rec", 4); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "bounds [min 1, max 3]") {
		t.Errorf("--pservers 4: %v, want InvalidArgument naming the bounds", err)
	}
	rec.Spec.Mode = jobspec.ModeAsync
	if err := checkPserverScale(rec, "rec", 3); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "sync mode") {
		t.Errorf("async: %v, want InvalidArgument naming sync mode", err)
	}
}
