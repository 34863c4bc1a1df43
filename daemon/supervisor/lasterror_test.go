package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastErrorLineQuotesTheLastRunsCause(t *testing.T) {
	tests := []struct {
		name, log, want string
	}{
		{"exit error", "=== gtraind: starting trainer-0 (attempt 1) at T ===\n" +
			"time=T level=INFO msg=started\n" +
			"time=T level=ERROR msg=\"step failed\" err=\"bad\"\n" +
			"gtraind: trainer: label 23.1 is not a class index in [0, 10)\n",
			"gtraind: trainer: label 23.1 is not a class index in [0, 10)"},
		{"error record only", "=== gtraind: starting trainer-0 (attempt 1) at T ===\n" +
			"time=T level=ERROR msg=\"cannot read shard\"\ntime=T level=INFO msg=bye\n",
			`time=T level=ERROR msg="cannot read shard"`},
		{"panic", "=== gtraind: starting master (attempt 2) at T ===\npanic: runtime error: index out of range\n\ngoroutine 1 [running]:\n",
			"panic: runtime error: index out of range"},
		{"a program's traceback", "=== gtraind: starting trainer-0 (attempt 6) at T ===\n" +
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: Traceback (most recent call last):\n" +
			"  File \"/tmp/workspace/m.py\", line 9, in grad\n    raise ValueError(\"shape mismatch\")\n" +
			"ValueError: shape mismatch\n\n",
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: Traceback (most recent call last): ... ValueError: shape mismatch"},
		{"a warning after the traceback", "=== gtraind: starting trainer-0 (attempt 6) at T ===\n" +
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: Traceback (most recent call last):\n" +
			"  File \"m.py\", line 9, in grad\ntorch.OutOfMemoryError: out of memory\n[W CPUAllocator.cpp:231] Memory block freed twice\n",
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: Traceback (most recent call last): ... torch.OutOfMemoryError: out of memory"},
		{"log records after the exit error", "=== gtraind: starting trainer-0 (attempt 1) at T ===\n" +
			"gtraind: trainer: cannot reach the master\ntime=T level=INFO msg=bye role=trainer job=fit index=0\n",
			"gtraind: trainer: cannot reach the master"},
		{"a Go program's own log records", "=== gtraind: starting trainer-0 (attempt 6) at T ===\n" +
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: time=T level=INFO msg=declared\n" +
			"time=T level=ERROR msg=\"bad shape\" want=3 role=model\n" +
			"time=T level=INFO msg=bye role=trainer job=fit index=0\n",
			"gtraind: trainer: model program: gradient: program exited: exit status 1; stderr: time=T level=INFO msg=declared ... " +
				"time=T level=ERROR msg=\"bad shape\" want=3 role=model"},
		{"only the last run", "=== gtraind: starting trainer-0 (attempt 1) at T ===\ngtraind: old cause\n" +
			"=== gtraind: starting trainer-0 (attempt 2) at T ===\ntime=T level=INFO msg=killed\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.log")
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := lastErrorLine(path); got != tt.want {
				t.Errorf("lastErrorLine = %q, want %q", got, tt.want)
			}
		})
	}
	if got := lastErrorLine(filepath.Join(t.TempDir(), "missing.log")); got != "" {
		t.Errorf("a missing log gave %q", got)
	}
	long := "gtraind: " + strings.Repeat("x", 1000)
	path := filepath.Join(t.TempDir(), "long.log")
	os.WriteFile(path, []byte(long+"\n"), 0o600)
	if got := lastErrorLine(path); len(got) > maxLastError+3 || !strings.HasSuffix(got, "...") {
		t.Errorf("a long line was quoted as %d bytes", len(got))
	}
	os.WriteFile(path, []byte(long+"\n"+strings.Repeat("y", 1000)+"\nValueError: z\n"), 0o600)
	if got := lastErrorLine(path); len(got) > maxLastError+3 || !strings.HasSuffix(got, " ... ValueError: z") {
		t.Errorf("a long error's first and last lines were quoted as %d bytes: %q", len(got), got)
	}
}
