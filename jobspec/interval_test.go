package jobspec

import (
	"errors"
	"testing"
	"time"
)

func TestInterval(t *testing.T) {
	tests := []struct {
		every string
		d     time.Duration
		steps int64
		ok    bool
	}{
		{"10s", 10 * time.Second, 0, true},
		{"1m30s", 90 * time.Second, 0, true},
		{"250ms", 250 * time.Millisecond, 0, true},
		{"200", 0, 200, true},
		{"1", 0, 1, true},
		{"", 0, 0, false},
		{"0", 0, 0, false},
		{"-5", 0, 0, false},
		{"0s", 0, 0, false},
		{"-1s", 0, 0, false},
		{"1.5", 0, 0, false},
		{"ten seconds", 0, 0, false},
		{"200 steps", 0, 0, false},
	}
	for _, tt := range tests {
		d, steps, err := CheckpointSpec{Every: tt.every}.Interval()
		if !tt.ok {
			if !errors.Is(err, ErrInvalidInterval) {
				t.Errorf("Interval(%q) = %v, %d, %v; want ErrInvalidInterval", tt.every, d, steps, err)
			}
			continue
		}
		if err != nil || d != tt.d || steps != tt.steps {
			t.Errorf("Interval(%q) = %v, %d, %v; want %v, %d", tt.every, d, steps, err, tt.d, tt.steps)
		}
	}
}
