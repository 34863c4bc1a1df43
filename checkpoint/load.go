package checkpoint

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// LoadReport says what Load found, what it loaded and what it had to pass over.
type LoadReport struct {
	// Loaded is the checkpoint returned (zero when Load fails).
	Loaded Record
	// Recorded is what the Recorder pointed at, if RecordFound.
	Recorded    Record
	RecordFound bool
	// Skipped lists, newest first, the candidates newer than Loaded (or all of
	// them when Load fails) that could not be used, with the reason.
	Skipped []SkippedCheckpoint
	// Warnings are oddities that did not prevent loading, e.g. a record
	// whose step differs from its file name's. (A file whose sha256 differs
	// from its record's is never loaded: it is Skipped, ErrNotRecorded.)
	Warnings []string
}

// FellBack reports whether a newer checkpoint than the loaded one was skipped.
func (r LoadReport) FellBack() bool { return len(r.Skipped) > 0 }

// SkippedCheckpoint is one candidate that Load could not use.
type SkippedCheckpoint struct {
	File     string
	Step     int64
	Reason   string
	Recorded bool  // the Recorder pointed at this file
	Err      error // errors.Is-checkable: ErrCorrupt, os.ErrNotExist, ...
}

type candidate struct {
	name     string
	step     int64
	recorded bool
	wantSHA  string
}

// Load returns the newest checkpoint that verifies among the recorded one and
// the files of this owner in Config.Dir, newest step first; with
// Config.StepRecord set, only a file whose sha256 matches its record (the
// Recorder's or StepRecord's) verifies. It returns
// ErrNoCheckpoint only when there is no record and no file, and
// ErrCheckpointLost when there is something but nothing valid; the report is
// filled in every case. A successful or lost Load also arms fencing: the next
// Save compare-and-swaps against the record version seen here.
func (s *Store) Load(ctx context.Context) (*Snapshot, LoadReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	var report LoadReport
	idx := s.cfg.Index
	rec, version, found, err := s.rec.Load(ctx, idx)
	if err != nil {
		return nil, report, fmt.Errorf("checkpoint: reading the record of %s: %w", s.cfg.Owner, err)
	}
	if found && rec.Index != idx {
		return nil, report, fmt.Errorf("%w: the record stored for %s (index %d) names index %d", ErrCorrupt, s.cfg.Owner, idx, rec.Index)
	}
	report.Recorded, report.RecordFound = rec, found
	s.version, s.versionKnown, s.unsure = version, true, nil

	cands, err := s.candidates(rec, found, &report)
	if err != nil {
		return nil, report, err
	}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, report, err
		}
		if c.wantSHA == "" {
			// A failure to read a record is not a reason to fall back.
			if c.wantSHA, err = s.stepRecord(ctx, c.step); err != nil {
				return nil, report, err
			}
		}
		snap, sha, err := s.loadCandidate(c)
		if err != nil {
			report.Skipped = append(report.Skipped, SkippedCheckpoint{
				File: c.name, Step: c.step, Reason: err.Error(), Recorded: c.recorded, Err: err,
			})
			s.log.Warn("checkpoint: skipping unusable checkpoint", "file", c.name, "step", c.step, "recorded", c.recorded, "err", err)
			continue
		}
		report.Loaded = Record{Index: idx, Step: c.step, File: c.name, SHA256: sha}
		if report.FellBack() {
			s.log.Warn("checkpoint: fell back to an older checkpoint", "file", c.name, "step", c.step, "skipped", len(report.Skipped))
		}
		return snap, report, nil
	}
	if !found && len(cands) == 0 {
		return nil, report, fmt.Errorf("checkpoint: %s has no record and no file in %s: %w", s.cfg.Owner, s.cfg.Dir, ErrNoCheckpoint)
	}
	return nil, report, lostError(s.cfg.Owner, rec, found, report.Skipped)
}

func lostError(owner string, rec Record, found bool, skipped []SkippedCheckpoint) error {
	what := "no record, but checkpoint files exist"
	if found {
		what = fmt.Sprintf("record points at step %d (%s)", rec.Step, rec.File)
	}
	return fmt.Errorf("%w: %s: %s; all %d candidates failed, newest because: %s",
		ErrCheckpointLost, owner, what, len(skipped), skipped[0].Reason)
}

// candidates merges the recorded file with this owner's files in the
// directory, newest step first (the recorded one first on a tie).
func (s *Store) candidates(rec Record, found bool, report *LoadReport) ([]candidate, error) {
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		// Never conclude "no checkpoint" from a directory we cannot read.
		return nil, fmt.Errorf("checkpoint: listing %s: %w", s.cfg.Dir, err)
	}
	byName := make(map[string]*candidate)
	for _, e := range entries {
		if step, ok := parseFileName(e.Name(), s.stem); ok && e.Type().IsRegular() {
			byName[e.Name()] = &candidate{name: e.Name(), step: step}
		}
	}
	if found {
		name := filepath.Base(rec.File)
		if c, ok := byName[name]; ok {
			c.recorded, c.wantSHA = true, rec.SHA256
			if c.step != rec.Step {
				report.Warnings = append(report.Warnings, fmt.Sprintf(
					"record says step %d but names file %s", rec.Step, name))
			}
		} else {
			byName[name] = &candidate{name: name, step: rec.Step, recorded: true, wantSHA: rec.SHA256}
		}
	}
	cands := make([]candidate, 0, len(byName))
	for _, c := range byName {
		cands = append(cands, *c)
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.step, a.step); c != 0 {
			return c
		}
		if a.recorded != b.recorded {
			if a.recorded {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.name, b.name)
	})
	return cands, nil
}

// readCandidate loads and verifies one file; the error names the file.
func (s *Store) readCandidate(c candidate) (*Snapshot, string, error) {
	if c.name == "" || c.name == "." || c.name == string(filepath.Separator) {
		return nil, "", fmt.Errorf("%w: the record names no file", ErrCorrupt)
	}
	path := filepath.Join(s.cfg.Dir, c.name)
	f, err := s.cfg.Paths.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint file %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%w: checkpoint file %s is not a regular file", ErrCorrupt, path)
	}
	snap, sum, err := decodeSnapshot(f, info.Size())
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint file %s: %w", path, err)
	}
	if snap.Identity != s.cfg.Identity {
		return nil, "", fmt.Errorf("%w: checkpoint file %s belongs to job %s, but its name says job %s",
			ErrCorrupt, path, snap.Identity, s.cfg.Identity)
	}
	if snap.Index != s.cfg.Index || snap.Step != c.step {
		return nil, "", fmt.Errorf("%w: checkpoint file %s holds index %d step %d, expected index %d step %d",
			ErrCorrupt, path, snap.Index, snap.Step, s.cfg.Index, c.step)
	}
	return snap, hex.EncodeToString(sum[:]), nil
}

// LoadStep loads the checkpoint of exactly step: the target of a global
// rollback, where every pserver must come back to the same step whatever its
// own newest file is. It arms fencing like Load. A damaged file is ErrCorrupt,
// a missing one fs.ErrNotExist, one whose sha256 differs from its record
// (the Recorder's when it names step, else Config.StepRecord's) or, with
// StepRecord set, that nothing records ErrNotRecorded, each naming the file.
func (s *Store) LoadStep(ctx context.Context, step int64) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.cfg.Index
	rec, version, found, err := s.rec.Load(ctx, idx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading the record of %s: %w", s.cfg.Owner, err)
	}
	s.version, s.versionKnown, s.unsure = version, true, nil
	c := candidate{name: fileName(s.stem, step), step: step}
	if found && rec.Step == step && filepath.Base(rec.File) == c.name {
		c.recorded, c.wantSHA = true, rec.SHA256
	} else if c.wantSHA, err = s.stepRecord(ctx, step); err != nil {
		return nil, err
	}
	snap, _, err := s.loadCandidate(c)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// stepRecord is the sha256 Config.StepRecord records for step ("" when
// nothing does, or without StepRecord).
func (s *Store) stepRecord(ctx context.Context, step int64) (string, error) {
	if s.cfg.StepRecord == nil {
		return "", nil
	}
	sha, found, err := s.cfg.StepRecord(ctx, step)
	if err != nil {
		return "", fmt.Errorf("checkpoint: reading the record of %s step %d: %w", s.cfg.Owner, step, err)
	}
	if !found {
		return "", nil
	}
	return sha, nil
}

// loadCandidate reads and verifies c, then holds it to its record: a file
// whose sha256 differs from the recorded one is not loaded however well it
// decodes, nor, with Config.StepRecord set, one that nothing records.
func (s *Store) loadCandidate(c candidate) (*Snapshot, string, error) {
	snap, sha, err := s.readCandidate(c)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(s.cfg.Dir, c.name)
	switch {
	case c.wantSHA == "" && !c.recorded && s.cfg.StepRecord == nil:
		return snap, sha, nil
	case c.wantSHA == "":
		return nil, "", fmt.Errorf("%w: no record names checkpoint file %s (step %d of %s), so it is not loaded",
			ErrNotRecorded, path, c.step, s.cfg.Owner)
	case c.wantSHA != sha:
		return nil, "", fmt.Errorf("%w: checkpoint file %s has sha256 %s but its record says %s: it changed after it was written, so it is not loaded",
			ErrNotRecorded, path, sha, c.wantSHA)
	}
	return snap, sha, nil
}

// LoadBase loads the checkpoint snap was written on (snap.Base, which must
// not be 0), held to the sha256 snap names for it rather than to a record:
// a loaded delta vouches for its base, whose step's record the job may
// have dropped since. The caller merges the two (and loads the base's own
// base the same way). It does not arm fencing. A file that differs from
// BaseSHA is ErrNotRecorded, a missing one fs.ErrNotExist.
func (s *Store) LoadBase(snap *Snapshot) (*Snapshot, error) {
	if snap.Base == 0 {
		return nil, fmt.Errorf("%w: checkpoint step %d has no base", ErrInvalidSnapshot, snap.Step)
	}
	c := candidate{name: fileName(s.stem, snap.Base), step: snap.Base}
	base, sha, err := s.readCandidate(c)
	if err != nil {
		return nil, err
	}
	if sha != snap.BaseSHA {
		return nil, fmt.Errorf("%w: checkpoint file %s has sha256 %s but step %d was written on one with %s",
			ErrNotRecorded, filepath.Join(s.cfg.Dir, c.name), sha, snap.Step, snap.BaseSHA)
	}
	return base, nil
}
