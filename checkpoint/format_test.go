package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func encodeToBytes(t *testing.T, snap Snapshot) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := encodeSnapshot(context.Background(), &buf, snap); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFormatRoundTrip(t *testing.T) {
	for _, snap := range []Snapshot{
		testSnapshot(3, 123),
		{Identity: testID, Index: 0, Step: 0},
		{Identity: Identity{Job: "j", Rev: 1 << 50}, Index: 7, Step: 1 << 40, Meta: []byte("{}"), Sections: []Section{{Name: "x", Data: []float32{1}}}},
	} {
		raw := encodeToBytes(t, snap)
		got, sum, err := decodeSnapshot(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatalf("step %d: %v", snap.Step, err)
		}
		assertSameSnapshot(t, snap, got)
		if !bytes.Equal(sum[:], raw[len(raw)-trailerSize+8:len(raw)-8]) {
			t.Fatalf("returned checksum %x is not the trailer's", sum)
		}
	}
}

func TestFormatEncodeStopsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := encodeSnapshot(ctx, &bytes.Buffer{}, testSnapshot(0, 1))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// Every single flipped byte, anywhere in the file, must be detected.
func TestFormatDetectsEveryFlippedByte(t *testing.T) {
	snap := Snapshot{Identity: testID, Index: 1, Step: 9, Meta: []byte(`{"a":1}`), Sections: []Section{
		{Name: "param/0", Data: []float32{1, 2, 3}}, {Name: "slot/0/0", Data: []float32{4, 5}},
	}}
	raw := encodeToBytes(t, snap)
	for off := range raw {
		damaged := bytes.Clone(raw)
		damaged[off] ^= 0x01
		_, _, err := decodeSnapshot(bytes.NewReader(damaged), int64(len(damaged)))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at offset %d of %d: err = %v, want ErrCorrupt", off, len(raw), err)
		}
	}
}

func TestFormatDetectsTruncationAndGarbage(t *testing.T) {
	raw := encodeToBytes(t, testSnapshot(0, 5))
	cases := map[string][]byte{
		"empty":            nil,
		"header only":      raw[:headerSize],
		"half":             raw[:len(raw)/2],
		"trailer cut":      raw[:len(raw)-1],
		"trailer missing":  raw[:len(raw)-trailerSize],
		"appended garbage": append(bytes.Clone(raw), 0, 0, 0, 0),
		"trailer doubled":  append(bytes.Clone(raw), raw[len(raw)-trailerSize:]...),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := decodeSnapshot(bytes.NewReader(b), int64(len(b)))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// A checksum-consistent file with lying length fields must fail cleanly, not
// allocate or panic: rebuild the trailer around hand-made content.
func TestFormatRejectsLyingLengths(t *testing.T) {
	base := encodeToBytes(t, Snapshot{Identity: Identity{Job: "j", Rev: 1}, Index: 0, Step: 1, Sections: []Section{{Name: "p", Data: []float32{1}}}})
	content := base[:len(base)-trailerSize]
	if raw := withTrailer(content); !bytes.Equal(raw, base) {
		t.Fatal("withTrailer does not reproduce the encoder's trailer")
	}
	// offsets inside content: magic 8, jobLen 4 @8, job 1 @12, rev 8 @13, index 8 @21, step 8 @29,
	// base 8 @37, baseSHA 32 @45, metaLen 4 @77, count 4 @81, nameLen 4 @85, name 1 @89, n 8 @90
	cases := map[string]struct {
		off int
		val []byte
	}{
		"job length zero":     {8, []byte{0, 0, 0, 0}},
		"job length huge":     {8, []byte{0xff, 0xff, 0, 0}},
		"job revision zero":   {13, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		"job revision huge":   {13, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		"base not before":     {37, []byte{1, 0, 0, 0, 0, 0, 0, 0}},
		"meta length huge":    {77, []byte{0xff, 0xff, 0xff, 0x7f}},
		"meta length past":    {77, []byte{0x40, 0, 0, 0}},
		"section count huge":  {81, []byte{0xff, 0xff, 0xff, 0xff}},
		"name length zero":    {85, []byte{0, 0, 0, 0}},
		"name length huge":    {85, []byte{0xff, 0xff, 0, 0}},
		"float count huge":    {90, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		"float count short":   {90, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		"index out of range":  {21, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		"version 1 magic":     {7, []byte{0x01}},
		"wrong magic version": {7, []byte{0x04}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := bytes.Clone(content)
			copy(c[tc.off:], tc.val)
			raw := withTrailer(c)
			_, _, err := decodeSnapshot(bytes.NewReader(raw), int64(len(raw)))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestFormatReadsVersion2: a file of the previous version (no base) still
// loads, as a self-contained checkpoint.
func TestFormatReadsVersion2(t *testing.T) {
	want := Snapshot{Identity: Identity{Job: "j", Rev: 1}, Index: 0, Step: 7, Sections: []Section{{Name: "p", Data: []float32{1, 2}}}}
	v3 := encodeToBytes(t, want)
	content := slices.Concat(v3[:37], v3[77:len(v3)-trailerSize])
	content[7] = 0x02
	raw := withTrailer(content)
	got, _, err := decodeSnapshot(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != 0 {
		t.Errorf("Base %d, want 0", got.Base)
	}
	assertSameSnapshot(t, want, got)
}

// withTrailer appends a valid trailer, so only the content's own checks can object.
func withTrailer(content []byte) []byte {
	sum := sha256.Sum256(content)
	raw := binary.LittleEndian.AppendUint64(bytes.Clone(content), uint64(len(content)))
	raw = append(raw, sum[:]...)
	return append(raw, trailerMagic...)
}
