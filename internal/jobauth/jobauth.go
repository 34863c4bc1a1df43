package jobauth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/fileperm"
)

// SecretSize is the length of a job's secret in bytes.
const SecretSize = 32

// Metadata keys of a call's job credential.
const (
	JobKey   = "gtrain-job"
	TokenKey = "gtrain-job-token"
)

// ekmLabel names the keying material a token is bound to (RFC 5705 wants
// an "EXPORTER-" prefix for labels not in the IANA registry).
const ekmLabel = "EXPORTER-gtrain-job-credential"

// NewSecret is a fresh random job secret.
func NewSecret() ([]byte, error) {
	b := make([]byte, SecretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("jobauth: make a job secret: %w", err)
	}
	return b, nil
}

// WriteFile writes secret into path (base64, mode 0600), replacing it
// whole.
func WriteFile(path string, secret []byte) error {
	enc := base64.StdEncoding.EncodeToString(secret) + "\n"
	if err := atomicfile.WriteFile(path, []byte(enc), fileperm.File); err != nil {
		return fmt.Errorf("jobauth: write the job credential %s: %w", path, err)
	}
	return nil
}

// ReadFile reads the secret WriteFile wrote; an empty path is no secret
// (nil), for a role started by hand without --job-credential.
func ReadFile(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jobauth: --job-credential: %w", err)
	}
	secret, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(secret) != SecretSize {
		return nil, fmt.Errorf("jobauth: --job-credential %s does not hold a job secret (base64 of %d bytes); the agent writes it when it starts the role", path, SecretSize)
	}
	return secret, nil
}

// token is what proves a call to be of job: HMAC-SHA256 under the job's
// secret of its name and binding (the connection's keying material, or
// nothing on plaintext).
func token(secret []byte, job string, binding []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("gtrain job credential v1\x00"))
	m.Write([]byte(job))
	m.Write([]byte{0})
	m.Write(binding)
	return m.Sum(nil)
}
