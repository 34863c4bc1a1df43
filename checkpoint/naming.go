package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// File names are <job>_r<rev>_<owner>-step-<step>.ckpt: the job's identity
// (name and record revision), then the owner naming whose state the file
// holds ("pserver-3", "master"), so that owners, jobs and successive jobs of
// one name can share a directory. The part before "-step-" is the file stem;
// a Store only ever lists, loads or deletes names of its own stem.

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

// fileStem starts every file name of owner's checkpoints of job id. A job
// name has no '_' and the revision only digits, so two identities never
// share a stem, nor is one stem a prefix that parseFileName would accept for
// another.
func fileStem(id Identity, owner string) string {
	return fmt.Sprintf("%s_r%d_%s", id.Job, id.Rev, owner)
}

// FileName is the name of owner's checkpoint of step in job id's
// checkpoint directory, e.g. "fit-a-line_r42_pserver-0-step-0000000200.ckpt",
// for tools and tests that look at the files themselves.
func FileName(id Identity, owner string, step int64) string {
	return fileName(fileStem(id, owner), step)
}

// fileName is the final name of a checkpoint; the zero-padded step keeps a
// directory listing in step order for humans.
func fileName(stem string, step int64) string {
	return fmt.Sprintf("%s-step-%010d.ckpt", stem, step)
}

// isTempFor recognises the temporary name (atomicfile.TempPattern) of a
// checkpoint of this stem being written, or left behind by a crashed Save.
// Its leading dot and suffix keep it out of parseFileName's reach, so a crash
// mid-write never produces a load candidate.
func isTempFor(name, stem string) bool {
	return strings.HasPrefix(name, "."+stem+"-step-") && strings.Contains(name, ".ckpt.tmp-")
}

// parseFileName returns the step of a final checkpoint name of this stem.
// Names that would not be produced by fileName (other owner, other job or
// revision, "+5", "0x1"...) are not ours and are ignored.
func parseFileName(name, stem string) (step int64, ok bool) {
	rest, ok := strings.CutPrefix(name, stem+"-step-")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".ckpt")
	if !ok {
		return 0, false
	}
	step, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || step < 0 || fileName(stem, step) != name {
		return 0, false
	}
	return step, true
}
