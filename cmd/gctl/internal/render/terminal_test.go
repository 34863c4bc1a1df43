package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFitWidth(t *testing.T) {
	line := strings.Repeat("x", 159) // the line, on 80 columns
	got := FitWidth(line, 80)
	if n := utf8.RuneCountInString(got); n != 79 || !strings.HasSuffix(got, "…") {
		t.Errorf("fitWidth(159 chars, 80) = %d runes %q, want 79 ending in …", n, got)
	}
	if got := FitWidth("short", 80); got != "short" {
		t.Errorf("a short line was changed: %q", got)
	}
	if got := FitWidth(line, 0); got != line {
		t.Error("an unknown width (0) cut the line")
	}
}
