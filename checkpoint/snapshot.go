package checkpoint

import "fmt"

// Section is one named float32 slice of a shard, e.g. "param/3" or "slot/3/0".
// Save writes Data, or, when Source is set, the floats Source supplies; Load
// always fills Data.
type Section struct {
	Name   string
	Data   []float32
	Source SectionSource
}

// SectionSource supplies a section's floats while Save writes them, a piece
// at a time, so that a caller writing values it keeps changing (a pserver's
// live shard) need not copy them all first.
type SectionSource interface {
	Len() int
	// ReadFloats copies the floats from off on into dst and returns how
	// many it copied (len(dst) unless the section ends first).
	ReadFloats(dst []float32, off int) int
}

// Len is the number of floats the section holds.
func (sec Section) Len() int {
	if sec.Source != nil {
		return sec.Source.Len()
	}
	return len(sec.Data)
}

// Snapshot is what a pserver hands to Save and gets back from Load.
type Snapshot struct {
	// Identity is the job the checkpoint belongs to. Load fills it in; Save
	// writes the Store's own (left zero by the caller, or equal to it).
	Identity Identity
	Index    int
	Step     int64
	// Base, when not 0, is an earlier step of the same owner whose
	// checkpoint this one is incomplete without (a pserver's rows written
	// as the change since that step). Save writes it, Load returns it and
	// prune never deletes a kept checkpoint's base; merging the two is the
	// caller's (LoadStep(Base)).
	Base int64
	// BaseSHA is the hex sha256 of Base's file: the delta, held to its own
	// record, vouches for its base (whose step's record may be gone), and
	// LoadBase loads no other file. Save fills it in.
	BaseSHA string
	// Meta is opaque caller JSON (optimizer config, counters...), stored verbatim.
	Meta     []byte
	Sections []Section
}

// Record names the current checkpoint of one pserver index in the Recorder.
type Record struct {
	Index  int    `json:"index"`
	Step   int64  `json:"step"`
	File   string `json:"file"`   // base name inside Config.Dir
	SHA256 string `json:"sha256"` // hex sha256 of the file content (header and sections)
}

func (snap Snapshot) validateFor(id Identity, index int) error {
	if snap.Identity != (Identity{}) && snap.Identity != id {
		return fmt.Errorf("%w: snapshot belongs to job %s but the store checkpoints job %s", ErrInvalidSnapshot, snap.Identity, id)
	}
	if snap.Index != index {
		return fmt.Errorf("%w: snapshot Index is %d but the store checkpoints pserver %d", ErrInvalidSnapshot, snap.Index, index)
	}
	if snap.Step < 0 {
		return fmt.Errorf("%w: snapshot Step is %d; it must not be negative", ErrInvalidSnapshot, snap.Step)
	}
	if snap.Base < 0 || (snap.Base != 0 && snap.Base >= snap.Step) {
		return fmt.Errorf("%w: snapshot Base is %d; it must be 0 or a step before Step %d", ErrInvalidSnapshot, snap.Base, snap.Step)
	}
	if len(snap.Meta) > maxMetaLen {
		return fmt.Errorf("%w: Meta is %d bytes; at most %d are allowed", ErrInvalidSnapshot, len(snap.Meta), maxMetaLen)
	}
	for i, sec := range snap.Sections {
		if sec.Name == "" {
			return fmt.Errorf("%w: section %d has an empty Name", ErrInvalidSnapshot, i)
		}
		if len(sec.Name) > maxNameLen {
			return fmt.Errorf("%w: section %d Name is %d bytes; at most %d are allowed", ErrInvalidSnapshot, i, len(sec.Name), maxNameLen)
		}
	}
	return nil
}
