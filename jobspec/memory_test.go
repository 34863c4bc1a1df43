package jobspec

import (
	"errors"
	"testing"
)

func TestMemoryBytes(t *testing.T) {
	tests := []struct {
		memory string
		want   int64
		ok     bool
	}{
		{"", 0, true},
		{"1024", 1024, true},
		{"512Mi", 512 << 20, true},
		{"1Gi", 1 << 30, true},
		{"500M", 500_000_000, true},
		{"2k", 2000, true},
		{"2K", 2000, true},
		{"3Ki", 3072, true},
		{"1.5Gi", 3 << 29, true},
		{"0.5", 1, true},
		{"7Ei", 7 << 60, true},
		{"8Ei", 0, false},
		{"-1Gi", 0, false},
		{"1 Gi", 0, false},
		{"1GB", 0, false},
		{"1gi", 0, false},
		{"Gi", 0, false},
		{"1e9", 0, false},
		{".5Gi", 0, false},
	}
	for _, tt := range tests {
		got, err := Resource{Memory: tt.memory}.MemoryBytes()
		if !tt.ok {
			if !errors.Is(err, ErrInvalidMemory) {
				t.Errorf("MemoryBytes(%q) = %d, %v; want ErrInvalidMemory", tt.memory, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MemoryBytes(%q) = %d, %v; want %d", tt.memory, got, err, tt.want)
		}
	}
}
