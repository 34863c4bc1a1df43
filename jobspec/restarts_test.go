package jobspec

import (
	"errors"
	"testing"
	"time"
)

func TestRestartsDefaultToFivePerMinute(t *testing.T) {
	s, err := Parse([]byte("name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: /d/train-*}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Restarts.WindowDuration()
	if s.Restarts.Limit != 5 || err != nil || d != time.Minute {
		t.Errorf("restarts = %+v (window %v, %v), want limit 5 per 60s", s.Restarts, d, err)
	}
}

func TestRestartsAreReadFromTheSpec(t *testing.T) {
	s, err := Parse([]byte("name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: /d/train-*}\nrestarts: {limit: 8, window: 5m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Restarts.WindowDuration(); s.Restarts.Limit != 8 || d != 5*time.Minute {
		t.Errorf("restarts = %+v, want limit 8 per 5m", s.Restarts)
	}
	s.Restarts.Window = "soon"
	if err := s.Validate(); !errors.Is(err, ErrInvalidWindow) || !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("Validate with window %q = %v, want ErrInvalidWindow and ErrInvalidSpec", s.Restarts.Window, err)
	}
}

func TestHungAfter(t *testing.T) {
	base := "name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: /d/train-*}\n"
	for _, tc := range []struct {
		yaml string
		want time.Duration
		err  error
	}{
		{"", time.Minute, nil},
		{"restarts: {hung_after: 5s}\n", 5 * time.Second, nil},
		{"restarts: {hung_after: 1h}\n", time.Hour, nil},
		{"restarts: {hung_after: 61m}\n", 0, ErrInvalidHungAfter},
		{"restarts: {hung_after: 0s}\n", 0, ErrInvalidHungAfter},
		{"restarts: {hung_after: -5s}\n", 0, ErrInvalidHungAfter},
		{"restarts: {hung_after: soon}\n", 0, ErrInvalidHungAfter},
	} {
		s, err := Parse([]byte(base + tc.yaml))
		if fe := s.Restarts.validate(); err == nil && fe != nil {
			err = fe
		}
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("%q: Parse = %v, want %v", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if d, err := s.Restarts.HungAfterDuration(); d != tc.want || err != nil {
			t.Errorf("%q: hung_after = %v, %v; want %v", tc.yaml, d, err, tc.want)
		}
	}
}
