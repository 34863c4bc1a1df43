package jobspec

import (
	"errors"
	"testing"
)

const boundsBase = "name: j\nmodel: {kind: linear, inputs: 13}\ndata: {train: /d/train-*}\n"

func TestTrainersBoundsForms(t *testing.T) {
	cases := []struct {
		yaml           string
		count, lo, hi  int
		pcount, plo, p int
	}{
		{"trainers: 3\npservers: 2\n", 3, 3, 3, 2, 2, 2},
		{"trainers: {count: 2, min: 1, max: 8}\npservers: 2\n", 2, 1, 8, 2, 2, 2},
		{"trainers: {count: 2}\npservers: {count: 3, min: 2, max: 4}\n", 2, 1, 2, 3, 2, 4},
		{"trainers:\n  count: 4\n  max: 6\n", 4, 1, 6, 1, 1, 1},
	}
	for _, tc := range cases {
		s, err := Parse([]byte(boundsBase + tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		lo, hi := s.TrainerBounds()
		plo, phi := s.PserverBounds()
		if s.Trainers != tc.count || lo != tc.lo || hi != tc.hi || s.Pservers != tc.pcount || plo != tc.plo || phi != tc.p {
			t.Fatalf("%q: trainers %d [%d, %d], pservers %d [%d, %d]; want %d [%d, %d], %d [%d, %d]", tc.yaml,
				s.Trainers, lo, hi, s.Pservers, plo, phi, tc.count, tc.lo, tc.hi, tc.pcount, tc.plo, tc.p)
		}
	}
}

func TestTrainersBoundsRejected(t *testing.T) {
	cases := []struct{ yaml, field string }{
		{"trainers: {count: 9, min: 1, max: 8}\n", "trainers"},
		{"trainers: {count: 2, min: 3, max: 8}\n", "trainers"},
		{"trainers: {count: 2, min: 9, max: 8}\n", "trainers.min"},
		{"trainers: {count: 2, min: 0, max: 8}\n", "trainers.min"},
		{"trainers: {min: 1, max: 8}\n", "trainers.count"},
		{"trainers: {count: 2, most: 8}\n", "trainers.most"},
		{"trainers: {count: two}\n", "trainers.count"},
		{"trainers: {count: 2, max: 5000}\n", "trainers.max"},
		{"pservers: {count: 2, min: 3, max: 4}\n", "pservers"},
		{"batch_size: 20\nglobal_batch: 50\n", "global_batch"},
		{"batch_size: 20\nglobal_batch: -20\n", "global_batch"},
	}
	for _, tc := range cases {
		s, err := Parse([]byte(boundsBase + tc.yaml))
		if err == nil {
			err = s.Validate()
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrInvalidSpec) {
			t.Fatalf("%q: %v, want a FieldError naming %s", tc.yaml, err, tc.field)
		}
	}
}

func TestGlobalBatchDefaultsToTrainersTimesBatch(t *testing.T) {
	s, err := Parse([]byte(boundsBase + "trainers: 3\nbatch_size: 20\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.GlobalBatch != 0 || s.StepRecords() != 60 || s.MicroBatches() != 3 {
		t.Fatalf("before FixGlobalBatch: global %d, step records %d, micro-batches %d", s.GlobalBatch, s.StepRecords(), s.MicroBatches())
	}
	s.Trainers = 5 // `gctl job start --trainers 5`
	s.FixGlobalBatch()
	s.Trainers = 1 // a later scale changes nothing
	if s.GlobalBatch != 100 || s.MicroBatches() != 5 {
		t.Fatalf("global batch %d, %d micro-batches; want 100 and 5", s.GlobalBatch, s.MicroBatches())
	}
	s, _ = Parse([]byte(boundsBase + "trainers: 3\nbatch_size: 20\nglobal_batch: 40\n"))
	if err := s.Validate(); err != nil || s.MicroBatches() != 2 {
		t.Fatalf("global_batch 40: %v, %d micro-batches", err, s.MicroBatches())
	}
}
