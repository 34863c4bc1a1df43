package auth

import (
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/testpki"
)

// writeCA writes a throwaway CA as ca.crt and ca.key (PKCS#8).
func writeCA(t *testing.T) (*x509.Certificate, string, string) {
	t.Helper()
	ca := testpki.New(t)
	return ca.Cert, ca.File, ca.WriteKey(t)
}

func TestWriteClientToken(t *testing.T) {
	dir := t.TempDir()
	ca, crt, kf := writeCA(t)
	path, tok, err := WriteClientToken(dir, crt, kf, "carol", Operator, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "carol.token") {
		t.Errorf("path %s", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := VerifyToken(ca, strings.TrimSpace(string(raw)))
	if err != nil || id.Name != "carol" || id.Role != Operator || id.TokenID != tok.ID || tok.ID == "" {
		t.Errorf("verify: %+v, %v", id, err)
	}
}

func TestWriteClientTokenRejectsAForeignKey(t *testing.T) {
	dir := t.TempDir()
	_, crt, _ := writeCA(t)
	_, _, otherKey := writeCA(t)
	if _, _, err := WriteClientToken(dir, crt, otherKey, "carol", Admin, time.Hour); !errors.Is(err, ErrBadKey) {
		t.Errorf("got %v, want ErrBadKey", err)
	}
	if _, _, err := WriteClientToken(dir, crt, crt, "carol", Admin, time.Hour); !errors.Is(err, ErrBadPEM) {
		t.Errorf("cert as key: got %v, want ErrBadPEM", err)
	}
	if _, _, err := WriteClientToken(dir, crt, otherKey, "../carol", Admin, time.Hour); !errors.Is(err, ErrBadName) {
		t.Errorf("../carol: got %v, want ErrBadName", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "carol.token")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused token was written: %v", err)
	}
}
