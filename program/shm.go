package program

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// The descriptors a program inherits (cmd.ExtraFiles starts at 3): what the
// declare request offers it in wire.ShmOffer.
const (
	fdParams  = 3
	fdRecords = 4
	fdGrads   = 5
)

// shm is the shared memory of one program speaking wire.VersionShm: three
// memfds, so that the records file can grow (a larger batch) without moving
// the parameters and gradients, whose mappings a trainer may hold as its
// own buffers (Client.Buffers). The program gets the params and records
// files read-only: a program that wrote into its parameters by mistake (an
// optimizer step in the program) would change what the trainer pushes next.
type shm struct {
	params, records, grads *os.File
	child                  []*os.File // what the program inherits, in fd order
	paramMap, gradMap      []byte
	recMap                 []byte
	paramViews, gradViews  [][]float32
	handedOut              bool // Buffers gave the views away: never unmap
}

// newShm creates the files. It fails where memfd_create does not exist;
// the client then offers nothing and the pipe carries everything.
func newShm() (*shm, error) {
	s := &shm{}
	var err error
	if s.params, err = memfd("gtrain-params"); err == nil {
		if s.records, err = memfd("gtrain-records"); err == nil {
			s.grads, err = memfd("gtrain-grads")
		}
	}
	if err == nil {
		_, err = unix.FcntlInt(s.records.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
	}
	var roParams, roRecords *os.File
	if err == nil {
		if roParams, err = reopenReadOnly(s.params); err == nil {
			roRecords, err = reopenReadOnly(s.records)
		}
	}
	if err != nil {
		if roParams != nil {
			roParams.Close() // not yet the child's: s.close does not know it
		}
		s.close()
		return nil, err
	}
	s.child = []*os.File{roParams, roRecords, s.grads}
	return s, nil
}

// memfd is a memory file that can be sealed (shm.size seals the params
// and grads; the records file, which grows with the batch, is sealed
// against shrinking at once), of mode 0600 rather than memfd's 0777: a
// sandboxed program, another uid, uses the descriptors it inherits (read
// only for the params and records) and cannot reopen them read-write
// through /proc.
func memfd(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := unix.Fchmod(fd, 0o600); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("memfd mode: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// reopenReadOnly opens f again through /proc for reading only: a program
// cannot map that descriptor writable.
func reopenReadOnly(f *os.File) (*os.File, error) {
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY, 0)
}

// childFiles are the descriptors the program inherits, in fd order; none
// without shared memory.
func (s *shm) childFiles() []*os.File {
	if s == nil {
		return nil
	}
	return s.child
}

// closeChildEnds closes the parent's copies of the read-only descriptors
// once the program has inherited them.
func (s *shm) closeChildEnds() {
	s.child[0].Close()
	s.child[1].Close()
}

// size sizes, seals and maps the params and grads files for the declared
// parameters.
func (s *shm) size(ps []model.ParamSpec) error {
	bytes := 4 * model.TotalSize(ps)
	for _, f := range []*os.File{s.params, s.grads} {
		if err := sizeSealed(f, bytes); err != nil {
			return err
		}
	}
	var err error
	if s.paramMap, err = mapFile(s.params, bytes); err != nil {
		return err
	}
	if s.gradMap, err = mapFile(s.grads, bytes); err != nil {
		return err
	}
	s.paramViews, s.gradViews = views(s.paramMap, ps), views(s.gradMap, ps)
	return nil
}

// sizeSealed sizes f to n bytes and seals its size, then checks it: the
// program holds the grads file read-write, and may resize it until the
// seal (or reopen a memfd through /proc). A file shorter than the
// trainer's mapping would crash the trainer (SIGBUS) at its next touch
// past the end; a program that resized it is refused (ErrProtocol).
func sizeSealed(f *os.File, n int) error {
	if err := f.Truncate(int64(n)); err != nil {
		return fmt.Errorf("size shared memory to %d bytes: %w", n, err)
	}
	beforeSeal(f)
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fmt.Errorf("seal shared memory %s: %w", f.Name(), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("shared memory %s: %w", f.Name(), err)
	}
	if st.Size != int64(n) {
		return fmt.Errorf("%w: shared memory %s is %d bytes once sealed, want %d: the program resized it", ErrProtocol, f.Name(), st.Size, n)
	}
	return nil
}

// beforeSeal runs between sizing and sealing a file: where a program's
// resize lands in the race sizeSealed closes (a test's hook).
var beforeSeal = func(*os.File) {}

// mapFile maps n bytes of f shared, read-write.
func mapFile(f *os.File, n int) ([]byte, error) {
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes of shared memory: %w", n, err)
	}
	return m, nil
}

func views(m []byte, ps []model.ParamSpec) [][]float32 { return split(floats(m), ps) }

// floats is m seen as float32s (mappings are page-aligned).
func floats(m []byte) []float32 {
	if len(m) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), len(m)/4)
}

// putRecords writes b into the records file, growing it when b does not fit,
// and says where it is. A classifier's labels go as int32 class indices.
func (s *shm) putRecords(b model.Batch, classes int, at int64) (*wire.ShmBatch, error) {
	nx := int64(b.N) * int64(b.Inputs)
	yOff := at + labelsAt(b)
	if need := at + recordsSize(b); need > int64(len(s.recMap)) {
		if err := s.growRecords(need); err != nil {
			return nil, err
		}
	}
	copy(floats(s.recMap[at:at+4*nx]), b.X[:nx])
	sb := &wire.ShmBatch{RecordsSize: int64(len(s.recMap)), X: at, Y: yOff, Labels: wire.LabelsFloat32}
	ys := s.recMap[yOff : yOff+4*int64(b.N)]
	if classes <= 1 {
		copy(floats(ys), b.Y[:b.N])
		return sb, nil
	}
	sb.Labels = wire.LabelsInt32
	if b.N == 0 {
		return sb, nil // no label to convert (and no &ys[0] to take)
	}
	if err := checkLabels(b, classes); err != nil {
		return nil, err
	}
	labels := unsafe.Slice((*int32)(unsafe.Pointer(&ys[0])), b.N)
	for i, y := range b.Y[:b.N] {
		labels[i] = int32(y)
	}
	return sb, nil
}

// checkLabels says which of b's labels is no class index of a classifier
// of classes outputs (none when classes <= 1: a regression's targets are
// any number). Through the pipe as through shared memory: a program gets
// integer labels in [0, classes), never -1 wrapped to the last class or
// 2.5 cut to 2.
func checkLabels(b model.Batch, classes int) error {
	if classes <= 1 {
		return nil
	}
	for i, y := range b.Y[:b.N] {
		if !(y >= 0 && y < float32(classes)) || y != float32(math.Trunc(float64(y))) {
			return fmt.Errorf("%w: record %d has label %v, not a class index in [0, %d) (model.outputs); convert the data with integer labels",
				ErrRecords, i, y, classes)
		}
	}
	return nil
}

// labelsAt is where b's labels start after its X: on a cache line of their own.
func labelsAt(b model.Batch) int64 { return (4*int64(b.N)*int64(b.Inputs) + 63) &^ 63 }

// recordsSize is the bytes of the records file b's records take.
func recordsSize(b model.Batch) int64 { return labelsAt(b) + 4*int64(b.N) }

// growRecords maps a larger records file: at least twice the old size, so
// that a run of growing batches remaps rarely.
func (s *shm) growRecords(need int64) error {
	size := max(need, 2*int64(len(s.recMap)), 1<<16)
	size = (size + 4095) &^ 4095
	if s.recMap != nil {
		if err := unix.Munmap(s.recMap); err != nil {
			return fmt.Errorf("unmap records: %w", err)
		}
		s.recMap = nil
	}
	// Sealed against shrinking from the start, and read-only in the program.
	if err := s.records.Truncate(size); err != nil {
		return fmt.Errorf("size shared memory to %d bytes: %w", size, err)
	}
	m, err := mapFile(s.records, int(size))
	if err != nil {
		return err
	}
	s.recMap = m
	return nil
}

// close releases the files, and the mappings unless Buffers handed them
// out: the caller's slices point into them for the life of the process.
func (s *shm) close() {
	if s == nil {
		return
	}
	if !s.handedOut {
		for _, m := range [][]byte{s.paramMap, s.gradMap} {
			if m != nil {
				unix.Munmap(m)
			}
		}
		s.paramMap, s.gradMap, s.paramViews, s.gradViews = nil, nil, nil, nil
	}
	if s.recMap != nil {
		unix.Munmap(s.recMap)
		s.recMap = nil
	}
	// The read-only ends too, if the program never started (closing an
	// *os.File twice is harmless).
	for _, f := range append([]*os.File{s.params, s.records, s.grads}, s.child...) {
		if f != nil {
			f.Close()
		}
	}
}

// aliases reports whether a is b (the same memory, the same length).
func aliases(a, b []float32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
