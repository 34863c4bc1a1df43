package controlapi

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCopyLines(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		flush    bool
		want     string
		consumed int64
	}{
		{"whole lines", "a\nb\n", false, "a\nb\n", 4},
		{"partial held back", "a\nb", false, "a\n", 2},
		{"partial flushed with a newline", "a\nb", true, "a\nb\n", 3},
		{"only a partial", "abc", false, "", 0},
		{"empty", "", true, "", 0},
	} {
		var out bytes.Buffer
		// OneByteReader makes lines arrive in pieces, as from a growing file.
		n, err := copyLines(iotest.OneByteReader(strings.NewReader(tc.in)), func(b []byte) error {
			if len(b) == 0 || b[len(b)-1] != '\n' {
				t.Errorf("%s: emitted %q, not whole lines", tc.name, b)
			}
			out.Write(b)
			return nil
		}, tc.flush)
		if err != nil || out.String() != tc.want || n != tc.consumed {
			t.Errorf("%s: copyLines = %q, %d, %v; want %q, %d", tc.name, out.String(), n, err, tc.want, tc.consumed)
		}
	}
}

func TestCopyLinesBoundsLongLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	var chunks []int
	n, err := copyLines(strings.NewReader(long), func(b []byte) error { chunks = append(chunks, len(b)); return nil }, false)
	if err != nil || n < maxLine || len(chunks) != 1 {
		t.Errorf("a line longer than maxLine: consumed %d, chunks %v, %v; want it sent in a piece", n, chunks, err)
	}
}

func TestTailOffset(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc\n", 3, "a\nb\nc\n"},
		{"a\nb\nc\n", 10, "a\nb\nc\n"},
		{"a\nb\nc", 1, "c"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\n\n\n", 2, "\n\n"},
		{"", 3, ""},
		{"a\nb\n", 0, "a\nb\n"},
	} {
		r := strings.NewReader(tc.in)
		off, err := tailOffset(r, int64(len(tc.in)), tc.n)
		if err != nil || tc.in[off:] != tc.want {
			t.Errorf("last %d lines of %q = %q (%v), want %q", tc.n, tc.in, tc.in[off:], err, tc.want)
		}
	}
	// Across read blocks.
	var b strings.Builder
	for range 20000 {
		b.WriteString("0123456789\n")
	}
	in := b.String()
	off, err := tailOffset(strings.NewReader(in), int64(len(in)), 5000)
	if err != nil || off != int64(len(in)-5000*11) {
		t.Errorf("last 5000 of 20000 lines start at %d (%v), want %d", off, err, len(in)-5000*11)
	}
}
