package daemon

import (
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"MemTotal:       16318412 kB\nMemFree: 1 kB\n", 16318412 * 1024},
		{"MemFree: 1 kB\nMemTotal: 2048 kB\n", 2048 * 1024},
		{"MemTotal: 100\n", 100},
		{"MemTotal: lots kB\n", 0},
		{"MemFree: 1 kB\n", 0},
		{"", 0},
	} {
		if got := parseMemTotal(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("parseMemTotal(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
