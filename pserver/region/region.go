package region

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Region is one trainer's shared memory with one pserver of its host: a
// gradient half then a parameter half of Floats float32s each, a block's
// values at the same place in both (Offsets).
type Region struct {
	ID     uint64 // what a push names it by: random, so not guessed
	Floats int
	mem    []byte
}

// seals are what a region's memfd must carry before a pserver maps it: a
// trainer that shrank the file under the pserver's mapping would crash
// the pserver (SIGBUS) at its next touch past the end.
const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// Create makes a region of floats float32s a half in a sealed memfd and
// maps it; the file is what Attach hands to the pserver.
func Create(floats int) (*Region, *os.File, error) {
	if floats <= 0 || floats > maxFloats {
		return nil, nil, fmt.Errorf("region of %d floats: want 1..%d", floats, maxFloats)
	}
	fd, err := unix.MemfdCreate("gtrain-region", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "gtrain-region")
	if err := unix.Fchmod(fd, 0o600); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("region mode: %w", err)
	}
	if err := f.Truncate(int64(bytes(floats))); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("size the region: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("seal the region: %w", err)
	}
	r, err := mapRegion(fd, floats)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand panics instead)
	r.ID = binary.LittleEndian.Uint64(id[:])
	return r, f, nil
}

// maxFloats bounds a half: a pserver maps no more than 2 GiB for one trainer.
const maxFloats = 1 << 28

func bytes(floats int) int { return 2 * 4 * floats }

// open maps a region a trainer handed over, after checking that it is
// sealed against resizing and holds two halves of floats.
func open(fd int, floats int) (*Region, error) {
	got, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("the region's seals: %w (not a memfd?)", err)
	}
	if got&(unix.F_SEAL_SHRINK|unix.F_SEAL_GROW) != unix.F_SEAL_SHRINK|unix.F_SEAL_GROW {
		return nil, errors.New("the region is not sealed against resizing")
	}
	// A memfd of huge pages (MFD_HUGETLB) could still fault: a hole
	// punched in it gives its pages back, and with the pool empty the
	// pserver's next touch is a SIGBUS. Only shmem (tmpfs) is taken.
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
		return nil, fmt.Errorf("the region is not a memfd of shared memory (file system %#x, %v)", fs.Type, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("the region's size: %w", err)
	}
	if floats <= 0 || floats > maxFloats || st.Size != int64(bytes(floats)) {
		return nil, fmt.Errorf("region of %d bytes, want %d (two halves of %d floats)", st.Size, bytes(floats), floats)
	}
	return mapRegion(fd, floats)
}

func mapRegion(fd, floats int) (*Region, error) {
	m, err := unix.Mmap(fd, 0, bytes(floats), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the region: %w", err)
	}
	return &Region{Floats: floats, mem: m}, nil
}

// Grads is the gradient half: the trainer writes, the pserver reads.
func (r *Region) Grads() []float32 { return r.half(0) }

// Params is the parameter half: the pserver writes, the trainer reads.
func (r *Region) Params() []float32 { return r.half(1) }

func (r *Region) half(k int) []float32 {
	all := unsafe.Slice((*float32)(unsafe.Pointer(&r.mem[0])), 2*r.Floats)
	return all[k*r.Floats : (k+1)*r.Floats : (k+1)*r.Floats]
}

// Close unmaps the region; its halves must not be used after.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem = nil
	return err
}
