package pki

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrGossipKey means a gossip key that memberlist cannot use.
var ErrGossipKey = errors.New("bad gossip key")

// GossipKeyFile is the name `gtraind cert init` gives the gossip key.
const GossipKeyFile = "gossip.key"

// NewGossipKey is a random 32-byte gossip key, base64 (memberlist's AES-256).
func NewGossipKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pki: gossip key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ParseGossipKey decodes a --gossip-key: base64 of 16, 24 or 32 bytes
// (AES-128/192/256), given as such or as @FILE holding it.
func ParseGossipKey(s string) ([]byte, error) {
	from := "--gossip-key"
	if path, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrGossipKey, err)
		}
		if err := CheckKeyFile("--gossip-key file", path); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrGossipKey, err)
		}
		s, from = string(b), "--gossip-key file "+path
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not base64: %v", ErrGossipKey, from, err)
	}
	switch len(key) {
	case 16, 24, 32:
		return key, nil
	}
	return nil, fmt.Errorf("%w: %s decodes to %d bytes, want 16, 24 or 32 (e.g. the gossip.key of gtraind cert init)",
		ErrGossipKey, from, len(key))
}
