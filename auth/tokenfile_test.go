package auth

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCA writes a throwaway CA as ca.crt and ca.key (PKCS#8) in dir.
func writeCA(t *testing.T, dir string) (*x509.Certificate, string, string) {
	t.Helper()
	ca, key := testCA(t)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	crt, kf := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ca, crt, kf
}

func TestWriteClientToken(t *testing.T) {
	dir := t.TempDir()
	ca, crt, kf := writeCA(t, dir)
	path, err := WriteClientToken(dir, crt, kf, "carol", Operator, time.Hour)
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
	if err != nil || id.Name != "carol" || id.Role != Operator {
		t.Errorf("verify: %+v, %v", id, err)
	}
}

func TestWriteClientTokenRejectsAForeignKey(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	_, crt, _ := writeCA(t, dir)
	_, _, otherKey := writeCA(t, other)
	if _, err := WriteClientToken(dir, crt, otherKey, "carol", Admin, time.Hour); !errors.Is(err, ErrBadKey) {
		t.Errorf("got %v, want ErrBadKey", err)
	}
	if _, err := WriteClientToken(dir, crt, crt, "carol", Admin, time.Hour); !errors.Is(err, ErrBadPEM) {
		t.Errorf("cert as key: got %v, want ErrBadPEM", err)
	}
	if _, err := WriteClientToken(dir, crt, otherKey, "../carol", Admin, time.Hour); !errors.Is(err, ErrBadName) {
		t.Errorf("../carol: got %v, want ErrBadName", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "carol.token")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused token was written: %v", err)
	}
}
