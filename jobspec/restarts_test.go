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
