package jobspec

import (
	"slices"
	"testing"
)

func TestWorkers(t *testing.T) {
	tests := []struct {
		trainers, pservers int
		want               []string
	}{
		{2, 2, []string{"master", "pserver-0", "pserver-1", "trainer-0", "trainer-1"}},
		{3, 1, []string{"master", "pserver-0", "trainer-0", "trainer-1", "trainer-2"}},
		{0, -1, []string{"master"}},
	}
	for _, tt := range tests {
		s := Spec{Trainers: tt.trainers, Pservers: tt.pservers}
		if got := s.Workers(); !slices.Equal(got, tt.want) {
			t.Errorf("Workers(trainers %d, pservers %d) = %v, want %v", tt.trainers, tt.pservers, got, tt.want)
		}
	}
}
