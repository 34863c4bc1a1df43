package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// File names are <owner>-step-<step>.ckpt, the owner naming whose state the
// file holds ("pserver-3", "master"), so owners can share a directory.

// pserverOwner is the owner Config defaults to: the name a pserver's
// checkpoints have always had on disk.
func pserverOwner(index int) string { return "pserver-" + strconv.Itoa(index) }

// validOwner: an owner is part of a file name, so it is kept to characters
// safe in every file system, and never starts with the temp files' dot.
func validOwner(owner string) bool {
	if owner == "" {
		return false
	}
	for _, r := range owner {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
		if !ok {
			return false
		}
	}
	return true
}

// fileName is the final name of a checkpoint; the zero-padded step keeps a
// directory listing in step order for humans.
func fileName(owner string, step int64) string {
	return fmt.Sprintf("%s-step-%010d.ckpt", owner, step)
}

// isTempFor recognises the temporary name (atomicfile.TempPattern) of a
// checkpoint of this index being written, or left behind by a crashed Save.
// Its leading dot and suffix keep it out of parseFileName's reach, so a crash
// mid-write never produces a load candidate.
func isTempFor(name, owner string) bool {
	return strings.HasPrefix(name, "."+owner+"-step-") && strings.Contains(name, ".ckpt.tmp-")
}

// parseFileName returns the step of a final checkpoint name of this owner.
// Names that would not be produced by fileName (other owner, "+5", "0x1"...)
// are not ours and are ignored.
func parseFileName(name, owner string) (step int64, ok bool) {
	rest, ok := strings.CutPrefix(name, owner+"-step-")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".ckpt")
	if !ok {
		return 0, false
	}
	step, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || step < 0 || fileName(owner, step) != name {
		return 0, false
	}
	return step, true
}
