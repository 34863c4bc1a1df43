package coord

import "testing"

func TestParseHandoverKey(t *testing.T) {
	tests := []struct {
		key  string
		job  string
		kind HandoverKind
	}{
		{GlobalCheckpointKey("j1"), "j1", HandoverCheckpoint},
		{MasterMetaKey("j1"), "j1", HandoverMaster},
		{CheckpointMarkKey("j1", 5, "master"), "j1", HandoverNone},
		{StateKey("j1"), "j1", HandoverNone},
		{DrainKey("n1"), "", HandoverNone},
	}
	for _, tt := range tests {
		job, kind := ParseHandoverKey(tt.key)
		if job != tt.job || kind != tt.kind {
			t.Errorf("ParseHandoverKey(%q) = %q, %d; want %q, %d", tt.key, job, kind, tt.job, tt.kind)
		}
	}
}
