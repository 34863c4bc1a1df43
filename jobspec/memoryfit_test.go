package jobspec

import (
	"errors"
	"math"
	"testing"
)

func TestMemoryNeed(t *testing.T) {
	tests := []struct {
		name  string
		setIt func(s *Spec)
		want  MemoryNeed
	}{
		{"linear 13, sgd, 1 pserver", func(*Spec) {},
			MemoryNeed{Params: 14, Slots: 0, PserverShare: 14, Pserver: 56, Trainer: 112, Master: 56}},
		{"3 pservers round the share up", func(s *Spec) { s.Pservers = 3 },
			MemoryNeed{Params: 14, Slots: 0, PserverShare: 5, Pserver: 20, Trainer: 112, Master: 56}},
		{"more pservers than parameters", func(s *Spec) { s.Pservers = 20 },
			MemoryNeed{Params: 14, Slots: 0, PserverShare: 1, Pserver: 4, Trainer: 112, Master: 56}},
		{"adam keeps two slots", func(s *Spec) { s.Optimizer.Kind = OptimizerAdam; s.Pservers = 2 },
			MemoryNeed{Params: 14, Slots: 2, PserverShare: 7, Pserver: 84, Trainer: 112, Master: 56}},
		{"momentum keeps one", func(s *Spec) { s.Optimizer.Kind = OptimizerMomentum },
			MemoryNeed{Params: 14, Slots: 1, PserverShare: 14, Pserver: 112, Trainer: 112, Master: 56}},
		// 13×1e5 + 1e5 + 1e5×1e5 + 1e5 + 1e5×1 + 1
		{"the issue's mlp", func(s *Spec) { s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{100000, 100000}} },
			MemoryNeed{Params: 10_001_600_001, PserverShare: 10_001_600_001, Pserver: 40_006_400_004, Trainer: 80_012_800_008, Master: 40_006_400_004}},
		{"sizes beyond int64 saturate", func(s *Spec) {
			s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{math.MaxInt32, math.MaxInt32, math.MaxInt32}}
		}, MemoryNeed{Params: math.MaxInt64, PserverShare: math.MaxInt64, Pserver: math.MaxInt64, Trainer: math.MaxInt64, Master: math.MaxInt64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec(t)
			tt.setIt(s)
			got, err := s.MemoryNeed()
			if err != nil || got != tt.want {
				t.Errorf("MemoryNeed = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	s := validSpec(t)
	s.Model.Kind = "cnn"
	if _, err := s.MemoryNeed(); err == nil {
		t.Error("MemoryNeed of an invalid model succeeded")
	}
}

// A stated request too small for the parameters is rejected with the
// numbers that show why; the request that fits exactly is accepted.
func TestValidateRejectsMemoryThatCannotHoldTheModel(t *testing.T) {
	s := validSpec(t)
	s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{100000, 100000}}
	s.Resources.Pserver = Resource{CPU: 1, Memory: "512Mi"}
	err := s.Validate()
	wantFieldError(t, err, "resources.pserver.memory", "512Mi (536870912 bytes)", "10001600001 parameters",
		"1 pserver(s) hold up to 10001600001 each", "sgd keeps 0 state slot(s)", "10001600001 × 4 bytes × 1 = 37.3Gi",
		"request at least 37.3Gi", "more pservers")
	if !errors.Is(err, ErrMemoryTooSmall) {
		t.Errorf("%v does not match ErrMemoryTooSmall", err)
	}

	s = validSpec(t)
	s.Optimizer.Kind = OptimizerAdam
	s.Pservers = 2
	s.Resources.Pserver.Memory = "83"
	wantFieldError(t, s.Validate(), "resources.pserver.memory", "7 × 4 bytes × 3 = 84", "adam keeps 2 state slot(s)")
	s.Resources.Pserver.Memory = "84"
	if err := s.Validate(); err != nil {
		t.Errorf("a request of exactly the need: %v", err)
	}

	s = validSpec(t)
	s.Resources.Trainer.Memory = "100"
	wantFieldError(t, s.Validate(), "resources.trainer.memory", "14 parameters: 14 × 4 bytes × 2 = 112", "at least 112")
	s.Resources.Trainer.Memory = ""
	s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{10000, 10000}} // 10^8 parameters, under MaxParams
	if err := s.Validate(); err != nil {
		t.Errorf("an unstated request is left to placement, got %v", err)
	}
}

func TestFormatMemory(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {1023, "1023"}, {1024, "1Ki"}, {512 << 20, "512Mi"}, {1536 << 20, "1.5Gi"},
		{40_006_400_004, "37.3Gi"}, {(1 << 30) + 1, "1.1Gi"}, {math.MaxInt64, "8Ei"},
	} {
		if got := FormatMemory(tt.n); got != tt.want {
			t.Errorf("FormatMemory(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if tt.n == math.MaxInt64 {
			continue // a saturated figure: 8Ei is one byte more than an int64 holds
		}
		if back, err := (Resource{Memory: FormatMemory(tt.n)}).MemoryBytes(); err != nil || back < tt.n {
			t.Errorf("MemoryBytes(FormatMemory(%d)) = %d, %v; want at least %d", tt.n, back, err, tt.n)
		}
	}
}
