package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// gzipMagic starts every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// openInput opens a raw input file and, when its first bytes are gzip's
// magic, decompresses it on the fly: Debian ships MNIST-style data as .gz,
// and a user should not have to gunzip (or rename) before converting. The
// contents decide, not the name; but a file named .gz that is not gzip is
// rejected, since it is most likely a damaged or half-finished download.
func openInput(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	br := bufio.NewReader(f)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	if !bytes.Equal(head, gzipMagic) {
		if strings.HasSuffix(path, ".gz") {
			f.Close()
			return nil, fmt.Errorf("%w: %s is named .gz but does not start with the gzip magic bytes 1f 8b (first bytes % x)", ErrBadGzip, path, head)
		}
		return readCloser{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: header: %v", ErrBadGzip, path, gzipReason(err))
	}
	return readCloser{gzipErrors{zr, path}, f}, nil
}

// readInputFile reads a whole raw input, decompressing gzip (see openInput).
func readInputFile(path string) ([]byte, error) {
	r, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return data, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// gzipErrors marks every failure of the decompressor (bad checksum, cut-off
// stream, corrupt block) as ErrBadGzip, naming the file: the caller then
// tells a damaged archive from a bad line of a good one.
type gzipErrors struct {
	r    io.Reader
	path string
}

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, fmt.Errorf("%w: %s: %v", ErrBadGzip, g.path, gzipReason(err))
	}
	return n, err
}

// gzipReason words the decompressor's error for an operator.
func gzipReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the compressed data is cut off (truncated file?)"
	}
	return err.Error()
}
