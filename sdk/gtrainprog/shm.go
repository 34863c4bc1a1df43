package gtrainprog

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gtrain/gtrain/program/wire"
)

// shared is the program's side of the shared memory (protocol version 2):
// the files the trainer offered at declare, mapped at the first batch. The
// parameters and records are mapped read-only: a model that wrote into its
// parameters would fault at once instead of corrupting the trainer's copy.
type shared struct {
	offer          *wire.ShmOffer
	params, grads  []byte
	records        []byte
	pviews, gviews [][]float32
	labels         []float32 // a classifier's int32 labels as Batch.Y wants them
	classes        int       // model.outputs of a classifier (> 1), else 0
}

// batch maps what req names and returns its parameters, records and the
// gradient buffers (zeros) that the model adds into.
func (s *shared) batch(req *wire.Request) ([][]float32, Batch, [][]float32, error) {
	if s.params == nil {
		if err := s.mapParams(req.Params); err != nil {
			return nil, Batch{}, nil, err
		}
	}
	sb := req.Batch
	if int64(len(s.records)) < sb.RecordsSize {
		if s.records != nil {
			unix.Munmap(s.records)
		}
		m, err := unix.Mmap(s.offer.Records, 0, int(sb.RecordsSize), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil, Batch{}, nil, fmt.Errorf("gtrainprog: map records: %w", err)
		}
		s.records = m
	}
	nx := req.N * req.Inputs
	if sb.X+4*int64(nx) > int64(len(s.records)) || sb.Y+4*int64(req.N) > int64(len(s.records)) {
		return nil, Batch{}, nil, fmt.Errorf("gtrainprog: batch of %d records lies outside the records file", req.N)
	}
	b := Batch{N: req.N, Inputs: req.Inputs, X: floatsAt(s.records, sb.X, nx)}
	if sb.Labels == wire.LabelsInt32 {
		ints := unsafe.Slice((*int32)(unsafe.Pointer(&s.records[sb.Y])), req.N)
		s.labels = s.labels[:0]
		for _, v := range ints {
			s.labels = append(s.labels, float32(v))
		}
		b.Y, b.Labels = s.labels, ints
	} else {
		b.Y = floatsAt(s.records, sb.Y, req.N)
	}
	return s.pviews, b, s.gviews, nil
}

// mapParams maps the parameter and gradient files, which never move.
func (s *shared) mapParams(ts []wire.Tensor) error {
	total := 0
	for _, t := range ts {
		total += t.Size()
	}
	var err error
	if s.params, err = unix.Mmap(s.offer.Params, 0, 4*total, unix.PROT_READ, unix.MAP_SHARED); err != nil {
		return fmt.Errorf("gtrainprog: map parameters: %w", err)
	}
	if s.grads, err = unix.Mmap(s.offer.Grads, 0, 4*total, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return fmt.Errorf("gtrainprog: map gradients: %w", err)
	}
	s.pviews, s.gviews = split(floatsAt(s.params, 0, total), ts), split(floatsAt(s.grads, 0, total), ts)
	return nil
}

func floatsAt(m []byte, off int64, n int) []float32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&m[off])), n)
}

func split(all []float32, ts []wire.Tensor) [][]float32 {
	out := make([][]float32, len(ts))
	off := 0
	for j, t := range ts {
		out[j] = all[off : off+t.Size() : off+t.Size()]
		off += t.Size()
	}
	return out
}
