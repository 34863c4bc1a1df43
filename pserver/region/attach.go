package region

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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

// Attach hands r (its memfd f) to the pserver taking regions at path, and
// returns once the pserver mapped it, or why it did not; replaces (0:
// none) is the ID of the region r replaces, which the pserver drops. The
// caller may close f after.
func Attach(ctx context.Context, path string, r *Region, f *os.File, replaces uint64) error {
	d := net.Dialer{Timeout: attachTimeout}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return err
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	_ = uc.SetDeadline(time.Now().Add(attachTimeout))
	var head [headSize]byte
	binary.LittleEndian.PutUint64(head[:8], r.ID)
	binary.LittleEndian.PutUint64(head[8:], uint64(r.Floats))
	binary.LittleEndian.PutUint64(head[16:], replaces)
	if _, _, err := uc.WriteMsgUnix(head[:], unix.UnixRights(int(f.Fd())), nil); err != nil {
		return fmt.Errorf("send the region: %w", err)
	}
	answer, err := bufio.NewReader(uc).ReadString('\n')
	if err != nil {
		return fmt.Errorf("the pserver's answer: %w", err)
	}
	if answer = strings.TrimSuffix(answer, "\n"); answer != "ok" {
		return fmt.Errorf("the pserver refused the region: %s", answer)
	}
	return nil
}

// Registry is a pserver's regions, by ID.
type Registry struct {
	floats func() int // a half's floats: the shard's size now
	log    *slog.Logger

	mu      sync.Mutex
	entries map[uint64]*Entry
	order   []uint64 // attach order, for eviction
}

// Entry is one attached region; Lock it for the length of a PushPull, so
// that two streams never use one region at once (a trainer's abandoned
// stream and its next one).
type Entry struct {
	sync.Mutex
	*Region
	users   int  // streams holding it (Registry.mu)
	evicted bool // no longer in the registry: unmapped by its last user
}

// maxRegions bounds the regions a pserver keeps mapped: a trainer holds one
// per pserver and attaches another, replacing it, only after a failed
// PushPull; the oldest beyond this are those of trainers gone.
const maxRegions = 64

// NewRegistry returns an empty registry taking regions of floats() floats
// a half.
func NewRegistry(floats func() int, log *slog.Logger) *Registry {
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

// take reads one region from conn and answers "ok" or why not.
func (g *Registry) take(conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(attachTimeout))
	err := g.receive(conn)
	answer := "ok"
	if err != nil {
		answer = strings.ReplaceAll(err.Error(), "\n", " ")
		g.log.Warn("a region was refused; that trainer moves its tensors through the socket", "err", err)
	}
	_, _ = conn.Write([]byte(answer + "\n"))
}

// headSize is an attach's bytes: the region's ID, its floats a half, and
// the ID of the region it replaces, each 8 bytes little-endian.
const headSize = 24

func (g *Registry) receive(conn *net.UnixConn) error {
	head := make([]byte, headSize)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(head, oob)
	if err != nil {
		return err
	}
	fds, err := fdsOf(oob[:oobn])
	if err != nil {
		return err
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if n != len(head) || len(fds) != 1 {
		return fmt.Errorf("want %d bytes and one descriptor, got %d bytes and %d", headSize, n, len(fds))
	}
	floats, want := int(binary.LittleEndian.Uint64(head[8:])), g.floats()
	if floats != want {
		return fmt.Errorf("a region of %d floats a half, this shard holds %d", floats, want)
	}
	r, err := open(fds[0], floats)
	if err != nil {
		return err
	}
	r.ID = binary.LittleEndian.Uint64(head[:8])
	g.add(r, binary.LittleEndian.Uint64(head[16:]))
	g.log.Info("a trainer of this host attached a shared-memory region: its pushes and pulls move no tensor through the socket",
		"region", fmt.Sprintf("%x", r.ID), "floats", floats)
	return nil
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

// add registers r, evicting the region it replaces, any of the same ID (a
// random collision, or a replay), and the oldest beyond maxRegions.
func (g *Registry) add(r *Region, replaces uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.evictLocked(replaces)
	g.evictLocked(r.ID)
	g.entries[r.ID] = &Entry{Region: r}
	g.order = append(g.order, r.ID)
	for len(g.order) > maxRegions {
		g.evictLocked(g.order[0])
	}
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
	if e.users == 0 {
		_ = e.Close()
	}
}

// ErrUnknown is a push naming a region this pserver does not hold (never
// attached, evicted, or of a pserver before a restart).
var ErrUnknown = errors.New("no such region")

// Use returns region id, of floats floats a half, held for one stream
// until the returned release; Lock the entry to read or write it.
func (g *Registry) Use(id uint64, floats int) (*Entry, func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.entries[id]
	if e == nil {
		return nil, nil, ErrUnknown
	}
	if e.Floats != floats {
		g.evictLocked(id)
		return nil, nil, fmt.Errorf("%w: region %x is of %d floats, the shard now %d", ErrUnknown, id, e.Floats, floats)
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

// Close unmaps every region no stream uses (the others as their streams end).
func (g *Registry) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
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
