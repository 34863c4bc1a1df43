package program

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits of an uploaded workspace (`gctl job start --package DIR`). The
// package travels in one Control API request and one etcd value, so it is
// small: a program and its helpers, not data or weights.
const (
	MaxPackage         = 768 << 10 // compressed bytes
	maxPackageUnpacked = 64 << 20
	maxPackageFiles    = 10000
)

// ErrPackage marks a package that cannot be made or used.
var ErrPackage = errors.New("bad workspace package")

// PackageSHA256 is the lowercase hex SHA-256 of a package's bytes: what the
// job spec records (model.package) and every unpacker checks.
func PackageSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Pack writes the directory tree dir as a gzipped tar of its directories and
// regular files (sorted, with zeroed times and owners, so the same tree gives
// the same bytes). A symlink or any other kind of file is refused: what the
// package holds must not depend on what lies outside it.
func Pack(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		return packEntry(tw, p, filepath.ToSlash(rel), d, buf.Len())
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPackage, dir, err)
	}
	if buf.Len() > MaxPackage {
		return nil, fmt.Errorf("%w: %s packs to %d bytes, over the %d a package may have; keep data and weights out of it",
			ErrPackage, dir, buf.Len(), MaxPackage)
	}
	return buf.Bytes(), nil
}

func packEntry(tw *tar.Writer, p, rel string, d fs.DirEntry, written int) error {
	if written > MaxPackage {
		return fmt.Errorf("over %d bytes", MaxPackage)
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	h := &tar.Header{Name: rel, Mode: int64(info.Mode().Perm())}
	switch {
	case info.IsDir():
		h.Typeflag, h.Name = tar.TypeDir, rel+"/"
		return tw.WriteHeader(h)
	case info.Mode().IsRegular():
		h.Typeflag, h.Size = tar.TypeReg, info.Size()
	default:
		return fmt.Errorf("%s is a symlink or special file; packages hold regular files and directories only", rel)
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, io.LimitReader(f, h.Size))
	return err
}

// Unpack checks that data has the SHA-256 sum and extracts it into the empty
// directory dst. Only directories and regular files with clean relative
// names are accepted, within size and count limits: a hostile package
// cannot write outside dst or fill the disk.
func Unpack(data []byte, sum, dst string) error {
	if got := PackageSHA256(data); got != sum {
		return fmt.Errorf("%w: sha256 %s, the job records %s", ErrPackage, got, sum)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPackage, err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for files := 0; ; files++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrPackage, err)
		}
		if files >= maxPackageFiles || total+h.Size > maxPackageUnpacked {
			return fmt.Errorf("%w: over %d files or %d bytes unpacked", ErrPackage, maxPackageFiles, maxPackageUnpacked)
		}
		total += h.Size
		if err := unpackEntry(tr, h, dst); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrPackage, h.Name, err)
		}
	}
}

func unpackEntry(tr *tar.Reader, h *tar.Header, dst string) error {
	name := strings.TrimSuffix(h.Name, "/")
	if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return errors.New("not a clean relative name")
	}
	target := filepath.Join(dst, filepath.FromSlash(name))
	mode := fs.FileMode(h.Mode).Perm() & 0o755
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(target, 0o700)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o400)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(tr, h.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("type %q: only directories and regular files", h.Typeflag)
}
