package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// keyPair is a certificate and its key as files that an admin may replace
// while the process runs (a rotated node certificate): every handshake
// stats both files, which is cheap, and loads them again when either's
// size or modification time changed, so that new connections present the
// new certificate and open ones are left alone. A pair that does not load
// (the files half replaced) keeps the last good one until the next try.
type keyPair struct {
	cert, key string

	mu    sync.Mutex
	stamp [2]fileStamp
	pair  *tls.Certificate
}

// fileStamp is what tells a replaced file from the one loaded.
type fileStamp struct {
	size  int64
	mtime time.Time
}

// loadKeyPair is the pair, loaded now: a pair that does not load at start
// is an error.
func loadKeyPair(cert, key string) (*keyPair, error) {
	kp := &keyPair{cert: cert, key: key}
	if err := kp.reload(kp.stamps()); err != nil {
		return nil, err
	}
	return kp, nil
}

// stamps are the files' size and mtime now (zero for a missing one).
func (kp *keyPair) stamps() [2]fileStamp {
	var s [2]fileStamp
	for i, f := range []string{kp.cert, kp.key} {
		if fi, err := os.Stat(f); err == nil {
			s[i] = fileStamp{size: fi.Size(), mtime: fi.ModTime()}
		}
	}
	return s
}

// reload reads the files; the caller holds mu or owns kp.
func (kp *keyPair) reload(stamp [2]fileStamp) error {
	pair, err := tls.LoadX509KeyPair(kp.cert, kp.key)
	if err != nil {
		return fmt.Errorf("pki: --tls-cert %s / --tls-key %s: %w", kp.cert, kp.key, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return fmt.Errorf("pki: --tls-cert %s: %w", kp.cert, err)
		}
	}
	kp.pair, kp.stamp = &pair, stamp
	return nil
}

// current is the pair to present now, re-read if the files changed.
func (kp *keyPair) current() *tls.Certificate {
	stamp := kp.stamps()
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if stamp != kp.stamp {
		_ = kp.reload(stamp) // a failed load keeps the last good pair
	}
	return kp.pair
}

// Leaf is the certificate the files hold now (after a reload, the new one).
func (f Files) Leaf() (*x509.Certificate, error) {
	kp, err := loadKeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	return kp.pair.Leaf, nil
}
