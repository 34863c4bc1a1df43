package jobspec

import (
	"errors"
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

func TestParseWorker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		role  string
		index int
		ok    bool
	}{
		{"master", RoleMaster, -1, true},
		{"pserver-0", RolePserver, 0, true},
		{"trainer-12", RoleTrainer, 12, true},
		{"trainer--1", "", 0, false},
		{"trainer-01", "", 0, false},
		{"trainer-+1", "", 0, false},
		{"pserver-", "", 0, false},
		{"masters", "", 0, false},
		{"worker-1", "", 0, false},
	} {
		role, index, err := ParseWorker(tc.name)
		if tc.ok != (err == nil) || (tc.ok && (role != tc.role || index != tc.index)) {
			t.Errorf("ParseWorker(%q) = %q, %d, %v; want %q, %d, ok=%v", tc.name, role, index, err, tc.role, tc.index, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrUnknownWorker) {
			t.Errorf("ParseWorker(%q) error %v does not wrap ErrUnknownWorker", tc.name, err)
		}
	}
	for _, w := range (&Spec{Pservers: 2, Trainers: 3}).Workers() {
		if _, _, err := ParseWorker(w); err != nil {
			t.Errorf("ParseWorker(%q) of a name Workers produced: %v", w, err)
		}
	}
}
