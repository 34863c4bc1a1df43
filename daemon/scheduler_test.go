package daemon

import (
	"errors"
	"maps"
	"testing"
)

func TestPlaceWorkers(t *testing.T) {
	workers := []string{"master", "pserver-0", "pserver-1", "trainer-0", "trainer-1"}
	for _, tc := range []struct {
		name  string
		nodes []string
		want  map[string]string
	}{
		{"single node gets everything", []string{"n1"}, map[string]string{
			"master": "n1", "pserver-0": "n1", "pserver-1": "n1", "trainer-0": "n1", "trainer-1": "n1"}},
		{"round-robin over sorted names, master first", []string{"c", "a", "b"}, map[string]string{
			"master": "a", "pserver-0": "b", "pserver-1": "c", "trainer-0": "a", "trainer-1": "b"}},
		{"duplicate names count once", []string{"b", "a", "b"}, map[string]string{
			"master": "a", "pserver-0": "b", "pserver-1": "a", "trainer-0": "b", "trainer-1": "a"}},
	} {
		got, err := placeWorkers(workers, tc.nodes)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: placeWorkers(%v) = %v, %v; want %v", tc.name, tc.nodes, got, err, tc.want)
		}
	}
	if _, err := placeWorkers(workers, nil); !errors.Is(err, ErrNoNodes) {
		t.Errorf("no nodes: %v, want ErrNoNodes", err)
	}
}
