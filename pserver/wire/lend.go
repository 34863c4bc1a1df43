package wire

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Loans lends the floats of bulk messages (a pull's parameters, a push's
// gradient) to gRPC instead of copying them into an encoded message: the
// codec encodes the other fields and hands gRPC the data where it lies,
// and gRPC copies it once, into its HTTP/2 frames. Encoding copied every
// byte of both directions once more (11% of BenchmarkPushPullMLP's CPU).
//
// The price is the lender's: the data must not change until gRPC released
// it. gRPC gives the buffer back (mem.Buffer's pool) once its writer
// copied the last frame of it, or dropped it with its stream; Wait returns
// then. A stream that dies with its connection may never give it back:
// Wait also returns when the stream's context is done, and what is written
// after that reaches no reader.
type Loans struct {
	mu   sync.Mutex
	out  int
	idle chan struct{} // closed when out drops to 0; nil while none is out
}

// Lend returns what to send (SendMsg) for m, a message whose bytes field
// named "data" is lent, through a stream that uses Codec.
func (l *Loans) Lend(m proto.Message) any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.out == 0 {
		l.idle = make(chan struct{})
	}
	l.out++
	return &loan{m: m, l: l}
}

// Wait returns once gRPC released every loan, or with ctx's error.
func (l *Loans) Wait(ctx context.Context) error {
	l.mu.Lock()
	idle := l.idle
	l.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Loans) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out--
	if l.out == 0 {
		close(l.idle)
		l.idle = nil
	}
}

// loan is a lent message; it is also the mem.BufferPool of its one data
// buffer, whose Put is gRPC giving the data back.
type loan struct {
	m    proto.Message
	l    *Loans
	once sync.Once
}

func (ln *loan) Get(int) *[]byte { panic("wire: a loan is no buffer pool to take from") }
func (ln *loan) Put(*[]byte)     { ln.once.Do(ln.l.release) }

// marshal encodes the message's other fields, then the data field's tag
// and length, and appends the data itself uncopied: valid protobuf (fields
// may come in any order) that any peer decodes. Data too small to be
// worth it is encoded as usual and given back at once.
func (ln *loan) marshal() (mem.BufferSlice, error) {
	r := ln.m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("data")
	if fd == nil || fd.Kind() != protoreflect.BytesKind {
		ln.Put(nil)
		return nil, fmt.Errorf("wire: %s has no bytes field data to lend", r.Descriptor().FullName())
	}
	data := r.Get(fd).Bytes()
	// gRPC never gives back a buffer under its pooling threshold.
	if len(data) < pooledMin || mem.IsBelowBufferPoolingThreshold(cap(data)) {
		defer ln.Put(nil)
		return Codec{}.Marshal(ln.m)
	}
	r.Clear(fd)
	head, err := proto.Marshal(ln.m)
	r.Set(fd, protoreflect.ValueOfBytes(data))
	if err != nil {
		ln.Put(nil)
		return nil, err
	}
	head = protowire.AppendTag(head, fd.Number(), protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(len(data)))
	return mem.BufferSlice{mem.SliceBuffer(head), mem.NewBuffer(&data, ln)}, nil
}
