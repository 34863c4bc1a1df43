package region

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// SocketPath is where the pserver serving gRPC on the unix socket grpcSocket
// takes regions: beside it.
func SocketPath(grpcSocket string) string {
	return strings.TrimSuffix(grpcSocket, ".sock") + ".regions.sock"
}

// attachTimeout bounds an attach, both sides: a pserver that does not
// answer leaves the trainer on the socket path, not waiting.
const attachTimeout = 5 * time.Second

// Attachment is a region attached to a pserver: the pserver keeps the
// region while this connection stays open and drops it once it closes, so
// a trainer that exits, or drops its region, leaves nothing mapped behind;
// and the trainer sees the connection end when the pserver exits or drops
// the region itself (Lost).
type Attachment struct {
	conn *net.UnixConn
	lost chan struct{}
}

// Attach hands r (its memfd f) to the pserver taking regions at path, and
// returns once the pserver mapped it, or why it did not. The caller may
// close f after, and Closes the attachment to give the region up.
func Attach(ctx context.Context, path string, r *Region, f *os.File) (*Attachment, error) {
	d := net.Dialer{Timeout: attachTimeout}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc := conn.(*net.UnixConn)
	a := &Attachment{conn: uc, lost: make(chan struct{})}
	if err := a.attach(r, f); err != nil {
		conn.Close()
		return nil, err
	}
	go func() {
		defer close(a.lost)
		_, _ = io.Copy(io.Discard, uc) // the pserver sends nothing more: this returns at its end
	}()
	return a, nil
}

func (a *Attachment) attach(r *Region, f *os.File) error {
	_ = a.conn.SetDeadline(time.Now().Add(attachTimeout))
	var head [headSize]byte
	binary.LittleEndian.PutUint64(head[:8], r.ID)
	binary.LittleEndian.PutUint64(head[8:], uint64(r.Floats))
	if _, _, err := a.conn.WriteMsgUnix(head[:], unix.UnixRights(int(f.Fd())), nil); err != nil {
		return fmt.Errorf("send the region: %w", err)
	}
	answer, err := readLine(a.conn)
	if err != nil {
		return fmt.Errorf("the pserver's answer: %w", err)
	}
	if answer != "ok" {
		return fmt.Errorf("the pserver refused the region: %s", answer)
	}
	return a.conn.SetDeadline(time.Time{})
}

// readLine reads up to a newline byte by byte: nothing past it is consumed.
func readLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 4096 {
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
	return "", errors.New("answer too long")
}

// Lost says whether the pserver ended the attachment (it exited, or
// dropped the region): pushes naming the region would be refused.
func (a *Attachment) Lost() bool {
	select {
	case <-a.lost:
		return true
	default:
		return false
	}
}

// Close gives the region up: the pserver drops it.
func (a *Attachment) Close() { _ = a.conn.Close() }

// Registry is a pserver's regions, by ID.
type Registry struct {
	floats int // a half's floats: the shard's size
	log    *slog.Logger

	mu      sync.Mutex
	entries map[uint64]*Entry
	order   []uint64 // attach order, for eviction
	closed  bool     // Close was called: no region is taken any more
}

// Entry is one attached region; Lock it for the length of a PushPull, so
// that two streams never use one region at once (a trainer's abandoned
// stream and its next one).
type Entry struct {
	sync.Mutex
	*Region
	users   int      // streams holding it (Registry.mu)
	evicted bool     // no longer in the registry: unmapped by its last user
	conn    net.Conn // the attachment: closed at eviction, so the trainer knows
}

// maxRegions bounds the regions a pserver keeps mapped at once: one per
// trainer of its host (a region is dropped when its trainer closes the
// attachment, or exits). Beyond it, the oldest goes: its trainer sees its
// attachment end and attaches again.
const maxRegions = 64

// NewRegistry returns an empty registry taking regions of floats floats
// a half.
func NewRegistry(floats int, log *slog.Logger) *Registry {
	return &Registry{floats: floats, log: log, entries: map[uint64]*Entry{}}
}

// Serve takes regions from lis until it is closed.
func (g *Registry) Serve(lis net.Listener) {
	for {
		conn, err := lis.Accept()
		if err != nil {
			return
		}
		go g.take(conn.(*net.UnixConn))
	}
}

// take reads one region from conn and answers "ok" or why not; it keeps
// the region while conn stays open (Attachment).
func (g *Registry) take(conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(attachTimeout))
	e, err := g.receive(conn)
	if err != nil {
		g.log.Warn("a region was refused; that trainer moves its tensors through the socket", "err", err)
		_, _ = conn.Write([]byte(strings.ReplaceAll(err.Error(), "\n", " ") + "\n"))
		return
	}
	_, err = conn.Write([]byte("ok\n"))
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	if err == nil {
		_, _ = io.Copy(io.Discard, conn) // until the trainer closes it, or evict does
	}
	g.mu.Lock()
	if g.entries[e.ID] == e { // not one of the same ID attached since
		g.evictLocked(e.ID)
	}
	g.mu.Unlock()
}

// headSize is an attach's bytes: the region's ID and its floats a half,
// each 8 bytes little-endian.
const headSize = 16

// receive maps the region conn brings and registers it, with conn.
func (g *Registry) receive(conn *net.UnixConn) (*Entry, error) {
	head := make([]byte, headSize)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(head, oob)
	if err != nil {
		return nil, err
	}
	fds, err := fdsOf(oob[:oobn])
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if n != len(head) || len(fds) != 1 {
		return nil, fmt.Errorf("want %d bytes and one descriptor, got %d bytes and %d", headSize, n, len(fds))
	}
	floats, want := int(binary.LittleEndian.Uint64(head[8:])), g.floats
	if floats != want {
		return nil, fmt.Errorf("a region of %d floats a half, this shard holds %d", floats, want)
	}
	r, err := open(fds[0], floats)
	if err != nil {
		return nil, err
	}
	r.ID = binary.LittleEndian.Uint64(head[:8])
	e, err := g.add(r, conn)
	if err != nil {
		r.Close()
		return nil, err
	}
	g.log.Info("a trainer of this host attached a shared-memory region: its pushes and pulls move no tensor through the socket",
		"region", fmt.Sprintf("%x", r.ID), "floats", floats)
	return e, nil
}

func fdsOf(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// add registers r, attached over conn, evicting any of the same ID (a
// random collision, or a replay) and the oldest beyond maxRegions.
func (g *Registry) add(r *Region, conn net.Conn) (*Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("the pserver is stopping")
	}
	g.evictLocked(r.ID)
	e := &Entry{Region: r, conn: conn}
	g.entries[r.ID] = e
	g.order = append(g.order, r.ID)
	for len(g.order) > maxRegions {
		g.evictLocked(g.order[0])
	}
	return e, nil
}

func (g *Registry) evictLocked(id uint64) {
	e := g.entries[id]
	if e == nil {
		return
	}
	delete(g.entries, id)
	for k, o := range g.order {
		if o == id {
			g.order = append(g.order[:k], g.order[k+1:]...)
			break
		}
	}
	e.evicted = true
	_ = e.conn.Close()
	if e.users == 0 {
		_ = e.Close()
	}
}

// ErrUnknown is a push naming a region this pserver does not hold (never
// attached, evicted, or of a pserver before a restart).
var ErrUnknown = errors.New("no such region")

// Floats is the floats a half of every region the registry takes: the
// size of the shard it was made for.
func (g *Registry) Floats() int { return g.floats }

// Use returns region id, held for one stream until the returned release;
// Lock the entry to read or write it. Every region has the registry's size
// (take refuses others), so a caller that checked Floats once needs no
// check per stream.
func (g *Registry) Use(id uint64) (*Entry, func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[id]
	if e == nil {
		return nil, nil, ErrUnknown
	}
	e.users++
	return e, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		e.users--
		if e.users == 0 && e.evicted {
			_ = e.Close()
		}
	}, nil
}

// Close drops every region (Drop) and takes no more.
func (g *Registry) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.dropLocked()
}

// Drop drops every region, as a pserver that restarted knows none: each is
// unmapped once no stream uses it, and its trainer sees its attachment end
// and attaches another.
func (g *Registry) Drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropLocked()
}

func (g *Registry) dropLocked() {
	for len(g.order) > 0 {
		g.evictLocked(g.order[0])
	}
}

// Len is how many regions are attached.
func (g *Registry) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.entries)
}
