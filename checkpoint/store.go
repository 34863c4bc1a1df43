package checkpoint

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gtrain/gtrain/internal/fileperm"
)

// Store saves and loads the checkpoints of one owner (Config.OwnerName) of
// one job (Config.Identity). Its methods are safe for concurrent use; they
// run one at a time.
type Store struct {
	cfg  Config
	stem string // starts the name of every file of this owner and job
	rec  Recorder
	log  *slog.Logger

	// crashAt, when set by a test, is called at each commit point; a non-nil
	// error aborts Save right there and leaves the files as a crash would.
	crashAt func(point string) error

	mu sync.Mutex
	// version is the record version this Store last saw; Save compare-and-swaps
	// against it so a writer that was superseded gets ErrConflict.
	version      int64
	versionKnown bool
	// unsure holds a record whose CompareAndSwap failed without an answer (the
	// write may or may not have landed); the next Save resolves it.
	unsure *Record
	// saved is the checkpoint this Store last saved: the usual base of the
	// next (Snapshot.Base), whose sha256 Save then need not read back.
	saved Record
}

// Commit points of Save, in order, for crash tests.
const (
	pointAfterWrite  = "after-write"
	pointAfterFsync  = "after-fsync"
	pointAfterRename = "after-rename"
	pointAfterRecord = "after-record"
	pointAfterDelete = "after-delete"
)

// NewStore checks cfg and creates cfg.Dir if needed. log may be nil.
//
// For fencing, call Load before the first Save: Save then refuses to move a
// record that changed since. A Save without a prior Load adopts whatever
// record version it finds.
func NewStore(cfg Config, rec Recorder, log *slog.Logger) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: Recorder is nil", ErrInvalidConfig)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Paths == nil {
		cfg.Paths = osPaths{}
	}
	if err := cfg.Paths.MkdirAll(cfg.Dir, fileperm.Dir); err != nil {
		return nil, fmt.Errorf("checkpoint: creating directory %s: %w", cfg.Dir, err)
	}
	cfg.Owner = cfg.OwnerName()
	return &Store{cfg: cfg, stem: fileStem(cfg.Identity, cfg.Owner), rec: rec, log: log}, nil
}

func (s *Store) crash(point string) error {
	if s.crashAt == nil {
		return nil
	}
	return s.crashAt(point)
}

// knownVersion returns the record version Save must compare against.
func (s *Store) knownVersion(ctx context.Context) (int64, error) {
	if s.versionKnown && s.unsure == nil {
		return s.version, nil
	}
	rec, version, found, err := s.rec.Load(ctx, s.cfg.Index)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: reading the record of %s: %w", s.cfg.Owner, err)
	}
	if s.unsure != nil {
		landed := found && rec == *s.unsure
		if !landed && version != s.version {
			return 0, fmt.Errorf("%w: record of %s moved to version %d (step %d) while this store's last write was unanswered",
				ErrConflict, s.cfg.Owner, version, rec.Step)
		}
		s.unsure = nil
	}
	s.version, s.versionKnown = version, true
	return version, nil
}
