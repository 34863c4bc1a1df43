package main

import (
	"testing"

	"github.com/gtrain/gtrain/internal/refdoc"
)

// TestReferenceCommands holds the reference's gtraind section to the
// command tree: a command or flag added without regenerating the document
// fails.
func TestReferenceCommands(t *testing.T) {
	refdoc.Check(t, "gtraind-commands", refdoc.Commands(newRoot(), "###"))
}
