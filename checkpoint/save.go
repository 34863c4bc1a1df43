package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/fileperm"
)

// Save commits snap as the newest checkpoint (see the package doc for the
// protocol) and returns the record it stored. Once the record is stored Save
// succeeds even if deleting old files fails; that is only logged.
func (s *Store) Save(ctx context.Context, snap Snapshot) (Record, error) {
	if err := snap.validateFor(s.cfg.Identity, s.cfg.Index); err != nil {
		return Record{}, err
	}
	snap.Identity = s.cfg.Identity
	s.mu.Lock()
	defer s.mu.Unlock()

	prevVersion, err := s.knownVersion(ctx)
	if err != nil {
		return Record{}, err
	}
	if snap.Base != 0 {
		if snap.BaseSHA, err = s.baseSHA(snap.Base); err != nil {
			return Record{}, err
		}
	}
	name := fileName(s.stem, snap.Step)
	sum, err := s.writeDurable(ctx, snap, name)
	if err != nil {
		return Record{}, err
	}
	rec := Record{Index: s.cfg.Index, Step: snap.Step, File: name, SHA256: hex.EncodeToString(sum[:])}
	newVersion, err := s.rec.CompareAndSwap(ctx, rec, prevVersion)
	if err != nil {
		return Record{}, s.recordFailed(ctx, rec, err)
	}
	s.version, s.saved = newVersion, rec
	if err := s.crash(pointAfterRecord); err != nil {
		return Record{}, err
	}
	s.prune(ctx, rec)
	if err := s.crash(pointAfterDelete); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// baseSHA is the sha256 of this owner's file of step base, the base of the
// checkpoint being saved: known when it is the one last saved, else read.
func (s *Store) baseSHA(base int64) (string, error) {
	if s.saved.Step == base && s.saved.SHA256 != "" {
		return s.saved.SHA256, nil
	}
	_, sha, err := s.readCandidate(candidate{name: fileName(s.stem, base), step: base})
	if err != nil {
		return "", fmt.Errorf("%w: the base of an incremental checkpoint: %w", ErrInvalidSnapshot, err)
	}
	return sha, nil
}

// writeDurable performs steps 1-3: temp file, fsync, rename + directory fsync.
// On a real error it removes what it wrote; on a simulated crash it leaves
// the debris a crash would.
func (s *Store) writeDurable(ctx context.Context, snap Snapshot, name string) (sum [sha256.Size]byte, err error) {
	final := filepath.Join(s.cfg.Dir, name)
	// The directory is checked again where it is written: a checkpoint.dir
	// swapped for a symlink out of the job's roots since is refused (the
	// instant between the check and the create is not covered).
	if err := s.cfg.Paths.Check(s.cfg.Dir); err != nil {
		return sum, fmt.Errorf("checkpoint: %w", err)
	}
	f, err := atomicfile.Create(final, fileperm.File)
	if err != nil {
		return sum, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Discard()

	if sum, err = encodeSnapshot(ctx, f, snap); err != nil {
		return sum, fmt.Errorf("checkpoint: writing %s: %w", f.TempName(), err)
	}
	if err = s.crash(pointAfterWrite); err != nil {
		f.Abandon()
		return sum, err
	}
	if err = f.Sync(); err != nil {
		return sum, fmt.Errorf("checkpoint: %w", err)
	}
	if err = s.crash(pointAfterFsync); err != nil {
		f.Abandon()
		return sum, err
	}
	if err = f.Commit(); err != nil {
		if errors.Is(err, atomicfile.ErrNotDurable) {
			// Not known to be durable, and not recorded: do not leave it as a load candidate.
			os.Remove(final)
		}
		return sum, fmt.Errorf("checkpoint: %w", err)
	}
	if err = s.crash(pointAfterRename); err != nil {
		return sum, err
	}
	return sum, nil
}

// recordFailed handles a failed step 4. On ErrConflict another writer owns the
// record, so our file must not become a load candidate (Load prefers the
// newest step) unless it is the very file the record names. On any other
// error the write may have landed: keep the file and resolve on the next Save.
func (s *Store) recordFailed(ctx context.Context, rec Record, casErr error) error {
	path := filepath.Join(s.cfg.Dir, rec.File)
	if !errors.Is(casErr, ErrConflict) {
		s.unsure = &rec
		return fmt.Errorf("checkpoint: recording %s (step %d) failed, outcome unknown; the next Save re-checks: %w", path, rec.Step, casErr)
	}
	current, _, found, err := s.rec.Load(ctx, s.cfg.Index)
	switch {
	case err != nil:
		s.log.Warn("checkpoint: leaving unrecorded file after conflict; cannot read the record", "file", path, "err", err)
	case found && current.File == rec.File:
		s.log.Warn("checkpoint: conflicting writer recorded the same file name; leaving it", "file", path)
	default:
		if err := os.Remove(path); err != nil {
			s.log.Warn("checkpoint: removing unrecorded file after conflict", "file", path, "err", err)
		}
	}
	return fmt.Errorf("checkpoint: recording %s (step %d): %w", path, rec.Step, casErr)
}

func (s *Store) remove(name string) {
	path := filepath.Join(s.cfg.Dir, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("checkpoint: deleting old file", "file", path, "err", err)
	}
}
