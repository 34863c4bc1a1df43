package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// fileName is the final name of a checkpoint; the zero-padded step keeps a
// directory listing in step order for humans.
func fileName(index int, step int64) string {
	return fmt.Sprintf("pserver-%d-step-%010d.ckpt", index, step)
}

// isTempFor recognises the temporary name (atomicfile.TempPattern) of a
// checkpoint of this index being written, or left behind by a crashed Save.
// Its leading dot and suffix keep it out of parseFileName's reach, so a crash
// mid-write never produces a load candidate.
func isTempFor(name string, index int) bool {
	return strings.HasPrefix(name, fmt.Sprintf(".pserver-%d-step-", index)) && strings.Contains(name, ".ckpt.tmp-")
}

// parseFileName returns the step of a final checkpoint name of this index.
// Names that would not be produced by fileName (other index, "+5", "0x1"...)
// are not ours and are ignored.
func parseFileName(name string, index int) (step int64, ok bool) {
	rest, ok := strings.CutPrefix(name, fmt.Sprintf("pserver-%d-step-", index))
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".ckpt")
	if !ok {
		return 0, false
	}
	step, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || step < 0 || fileName(index, step) != name {
		return 0, false
	}
	return step, true
}
