package controlapi

import (
	"bytes"
	"context"
	"reflect"
	"time"
)

// maxLogChunk bounds the data of one LogChunk the merge sends (a single
// longer line, at most maxLine, goes alone).
const maxLogChunk = 256 << 10

// logEvent is what a log source hands the merge: whole lines of a worker,
// word that everything the source holds now was handed over (caughtUp), or
// the error that ends the whole stream.
type logEvent struct {
	worker   string
	data     []byte // whole lines, each with its newline
	caughtUp bool
	err      error
}

// logLine is one line of a worker's log and the time it was written.
type logLine struct {
	worker string
	at     time.Time
	data   []byte
}

// mergeInput is the merge's view of one source: a channel of events whose
// lines are in time order by themselves (one worker's log file, or what
// another agent merged already). The channel closes when the source ends.
type mergeInput struct {
	events   <-chan logEvent
	pending  []logLine // received, not sent yet
	last     time.Time // of the last line with a time: the time of the lines without
	caughtUp bool      // nothing more to receive for now
	ended    bool
}

// settled: the input's next line is known, or it has none for now, so the
// merge may send the earliest pending line of all inputs.
func (in *mergeInput) settled() bool { return len(in.pending) > 0 || in.caughtUp || in.ended }

// add splits data into lines; a line without a time of its own (a stack
// trace...) takes the time of the line before it, so it stays where it was.
func (in *mergeInput) add(worker string, data []byte) {
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n') + 1
		if end == 0 {
			end = len(data)
		}
		line := data[:end]
		data = data[end:]
		if t, ok := LineTime(line); ok {
			in.last = t
		}
		in.pending = append(in.pending, logLine{worker: worker, at: in.last, data: line})
	}
	in.caughtUp = false
}

// logMerge sends the lines of several sources in time order. It holds at
// most the lines of one event per source: a source whose lines wait is not
// read from, so it waits too.
type logMerge struct {
	inputs []*mergeInput
	// emit sends lines of one worker.
	emit func(worker string, data []byte) error
	// idle, when set, is told each time all lines received were sent and
	// every source is caught up (or ended): the merged stream is caught up.
	// While it stays so, idle is told again every heartbeat (if > 0), so
	// that a relaying agent can tell a quiet node from a lost one.
	idle      func() error
	heartbeat time.Duration
	// more brings sources that start later (nodes that join while
	// following); nil when there are none. The merge ends when all the
	// sources it has ended, whatever more may bring.
	more <-chan (<-chan logEvent)
}

func newLogMerge(sources []<-chan logEvent, emit func(string, []byte) error, idle func() error) *logMerge {
	m := &logMerge{emit: emit, idle: idle}
	for _, s := range sources {
		m.inputs = append(m.inputs, &mergeInput{events: s})
	}
	return m
}

// run merges until every source has ended (nil), a source reports an
// error, sending fails, or ctx ends.
func (m *logMerge) run(ctx context.Context) error {
	var beat <-chan time.Time
	if m.idle != nil && m.heartbeat > 0 {
		t := time.NewTicker(m.heartbeat)
		defer t.Stop()
		beat = t.C
	}
	reported := false
	for {
		for m.settled() {
			sent, err := m.sendEarliest()
			if err != nil {
				return err
			}
			if !sent {
				break
			}
			reported = false
		}
		if m.ended() {
			return nil
		}
		if m.idle != nil && !reported && m.settled() {
			if err := m.idle(); err != nil {
				return err
			}
			reported = true
		}
		woke, err := m.receive(ctx, beat)
		if err != nil {
			return err
		}
		if woke {
			reported = false // still idle: say so again
		}
	}
}

func (m *logMerge) settled() bool {
	for _, in := range m.inputs {
		if !in.settled() {
			return false
		}
	}
	return true
}

func (m *logMerge) ended() bool {
	for _, in := range m.inputs {
		if !in.ended || len(in.pending) > 0 {
			return false
		}
	}
	return true
}

// sendEarliest sends the pending lines of the input whose next line is the
// earliest, up to the next line of any other input (on a tie the input
// listed first goes first). It reports whether anything was pending.
func (m *logMerge) sendEarliest() (bool, error) {
	first := -1
	for i, in := range m.inputs {
		if len(in.pending) > 0 && (first < 0 || in.pending[0].at.Before(m.inputs[first].pending[0].at)) {
			first = i
		}
	}
	if first < 0 {
		return false, nil
	}
	// The next line of the other inputs: the earliest, the first listed on a tie.
	next := -1
	for i, in := range m.inputs {
		if i != first && len(in.pending) > 0 && (next < 0 || in.pending[0].at.Before(m.inputs[next].pending[0].at)) {
			next = i
		}
	}
	in := m.inputs[first]
	n := 0
	for n < len(in.pending) && (next < 0 || m.goesBefore(in.pending[n].at, first, next)) {
		n++
	}
	lines := in.pending[:n]
	in.pending = in.pending[n:]
	if len(in.pending) == 0 {
		in.pending = nil
	}
	return true, m.sendLines(lines)
}

// goesBefore: a line at t of input i goes before the next line of input j.
func (m *logMerge) goesBefore(t time.Time, i, j int) bool {
	next := m.inputs[j].pending[0].at
	return t.Before(next) || t.Equal(next) && i < j
}

// sendLines sends consecutive lines of one worker together.
func (m *logMerge) sendLines(lines []logLine) error {
	var buf []byte
	worker := ""
	for _, l := range lines {
		if len(buf) > 0 && (l.worker != worker || len(buf)+len(l.data) > maxLogChunk) {
			if err := m.emit(worker, buf); err != nil {
				return err
			}
			buf = nil
		}
		worker = l.worker
		buf = append(buf, l.data...)
	}
	if len(buf) == 0 {
		return nil
	}
	return m.emit(worker, buf)
}

// receive waits for an event of any input that has no pending line (the
// others are not read: their lines wait their turn), a new source, or a
// heartbeat (woke), and applies it.
func (m *logMerge) receive(ctx context.Context, beat <-chan time.Time) (woke bool, err error) {
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(beat)},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(m.more)},
	}
	const fixed = 3
	var which []*mergeInput
	for _, in := range m.inputs {
		if !in.ended && len(in.pending) == 0 {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(in.events)})
			which = append(which, in)
		}
	}
	chosen, v, ok := reflect.Select(cases)
	switch {
	case chosen == 0:
		return false, ctx.Err()
	case chosen == 1:
		return true, nil
	case chosen == 2 && !ok:
		m.more = nil
		return false, nil
	case chosen == 2:
		m.inputs = append(m.inputs, &mergeInput{events: v.Interface().(<-chan logEvent)})
		return false, nil
	}
	in := which[chosen-fixed]
	if !ok {
		in.ended = true
		return false, nil
	}
	ev := v.Interface().(logEvent)
	switch {
	case ev.err != nil:
		return false, ev.err
	case ev.caughtUp:
		in.caughtUp = true
	case len(ev.data) > 0:
		in.add(ev.worker, ev.data)
	}
	return false, nil
}
