package master

import (
	"strings"
	"testing"
)

func TestStallMessageNamesTheTrainersOrSaysNoneAsked(t *testing.T) {
	if got := stallMessage(7, []int{0, 2}, "j"); !strings.Contains(got, "trainer IDs [0 2]") {
		t.Errorf("with holders: %q, want their IDs", got)
	}
	got := stallMessage(7, nil, "j")
	if strings.Contains(got, "[]") || !strings.Contains(got, "no trainer has asked for it") {
		t.Errorf("with no holder: %q, want it to say no trainer asked, not an empty list", got)
	}
}
