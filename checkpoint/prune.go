package checkpoint

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
)

// stepFile is one final checkpoint file of this Store's stem.
type stepFile struct {
	name string
	step int64
}

// prune is step 5: after rec is recorded, keep it, the newest Keep-1 older
// files of this index and the files of every step Config.KeepSteps names
// (the job's kept global checkpoints: an owner that went on writing while
// another could not must not delete the step the job rolls back to); delete
// the rest oldest first, plus files newer than rec (a history abandoned after
// a fallback) and temp files left by crashed Saves. When KeepSteps fails,
// nothing is deleted: a leftover file costs disk, a missing one the job.
func (s *Store) prune(ctx context.Context, rec Record) {
	var pinned []int64
	if s.cfg.KeepSteps != nil {
		var err error
		if pinned, err = s.cfg.KeepSteps(ctx); err != nil {
			s.log.Warn("checkpoint: cannot tell which steps the job still needs; deleting nothing", "err", err)
			return
		}
	}
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		s.log.Warn("checkpoint: listing for cleanup", "dir", s.cfg.Dir, "err", err)
		return
	}
	var ours []stepFile
	for _, e := range entries {
		if step, ok := parseFileName(e.Name(), s.stem); ok {
			ours = append(ours, stepFile{e.Name(), step})
		} else if isTempFor(e.Name(), s.stem) {
			s.remove(e.Name())
		}
	}
	doomed := doomedFiles(ours, rec, s.cfg.Keep, pinned)
	for _, f := range spareBases(ours, doomed, s.readBase) {
		s.remove(f.name)
	}
}

// spareBases takes out of doomed every file a kept file needs: its base,
// the base's base and so on (Snapshot.Base). A kept file whose header
// cannot be read keeps nothing (it does not load either).
func spareBases(ours, doomed []stepFile, base func(name string) int64) []stepFile {
	need := map[int64]bool{}
	for _, f := range ours {
		if slices.Contains(doomed, f) {
			continue
		}
		for b := base(f.name); b > 0 && !need[b]; {
			need[b] = true
			i := slices.IndexFunc(ours, func(o stepFile) bool { return o.step == b })
			if i < 0 {
				break
			}
			b = base(ours[i].name)
		}
	}
	return slices.DeleteFunc(doomed, func(f stepFile) bool { return need[f.step] })
}

// readBase is the Base in name's header, read from its first bytes (0 when
// it has none or cannot be read: a damaged file is no load candidate).
func (s *Store) readBase(name string) int64 {
	f, err := os.Open(filepath.Join(s.cfg.Dir, name))
	if err != nil {
		return 0
	}
	defer f.Close()
	c := &contentReader{r: bufio.NewReaderSize(f, 4096), h: sha256.New(), end: 8 + 4 + maxJobLen + 4*8 + sha256.Size, scratch: make([]byte, 8)}
	magic := make([]byte, len(fileMagic))
	if err := c.read(magic, "magic"); err != nil {
		return 0
	}
	snap, err := decodeHead(c, magic)
	if err != nil {
		s.log.Warn("checkpoint: reading the header for cleanup", "file", name, "err", err)
		return 0
	}
	return snap.Base
}

// doomedFiles returns the files prune deletes, oldest first: those beyond
// the keep newest at or below rec's step and those newer than rec, except
// rec's own file and any file of a pinned step.
func doomedFiles(ours []stepFile, rec Record, keep int, pinned []int64) []stepFile {
	ours = slices.Clone(ours)
	slices.SortFunc(ours, func(a, b stepFile) int { return cmp.Compare(b.step, a.step) })
	var doomed []stepFile
	kept := 0
	for _, f := range ours {
		switch {
		case f.name == rec.File:
			kept++
		case slices.Contains(pinned, f.step):
			// needed by a kept global checkpoint; does not count against keep
		case f.step > rec.Step || kept >= keep:
			doomed = append(doomed, f)
		default:
			kept++
		}
	}
	slices.SortFunc(doomed, func(a, b stepFile) int { return cmp.Compare(a.step, b.step) })
	return doomed
}
