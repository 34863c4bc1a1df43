package pserver

import (
	"strings"
	"testing"
)

func TestTableMemoryWarning(t *testing.T) {
	const mib = 1 << 20
	if w := tableMemoryWarning("pserver-0", 79*mib, 70*mib, 1000, 100*mib); w != "" {
		t.Errorf("at 79%% of the request: %q, want none", w)
	}
	w := tableMemoryWarning("pserver-1", 85*mib, 80*mib, 123456, 100*mib)
	for _, want := range []string{"pserver-1", "123456 rows", "85% of resources.pserver.memory", "gctl job resume --resources pserver.memory="} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
}
