package jobspec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStragglersDeadline(t *testing.T) {
	base := "name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: /d/train-*}\n"
	for _, tc := range []struct {
		yaml      string
		factor    int
		floor     time.Duration
		wantErr   string
		wantErrIs error
	}{
		{"", 4, time.Second, "", nil},
		{"stragglers: {factor: 3}\n", 3, time.Second, "", nil},
		{"stragglers: {min_wait: 250ms}\n", 4, 250 * time.Millisecond, "", nil},
		{"stragglers: {factor: 8, min_wait: 2s}\n", 8, 2 * time.Second, "", nil},
		{"stragglers: {factor: 1}\n", 0, 0, "stragglers.factor", nil},
		{"stragglers: {factor: 101}\n", 0, 0, "stragglers.factor", nil},
		{"stragglers: {min_wait: 0s}\n", 0, 0, "stragglers.min_wait", ErrInvalidStragglerWait},
		{"stragglers: {min_wait: soon}\n", 0, 0, "stragglers.min_wait", ErrInvalidStragglerWait},
		{"stragglers: {min_wait: 2h}\n", 0, 0, "stragglers.min_wait", ErrInvalidStragglerWait},
		{"stragglers: {wait: 2s}\n", 0, 0, "stragglers.wait", nil},
	} {
		s, err := Parse([]byte(base + tc.yaml))
		if err == nil {
			err = s.Validate()
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("%q: %v, want an invalid spec naming %s", tc.yaml, err, tc.wantErr)
			}
			if tc.wantErrIs != nil && !errors.Is(err, tc.wantErrIs) {
				t.Errorf("%q: %v, want %v", tc.yaml, err, tc.wantErrIs)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if f, fl := s.Stragglers.Deadline(); f != tc.factor || fl != tc.floor {
			t.Errorf("%q: deadline %d x mean, at least %s; want %d x, %s", tc.yaml, f, fl, tc.factor, tc.floor)
		}
	}
}
