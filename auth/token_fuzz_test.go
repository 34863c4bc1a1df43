package auth

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/testpki"
)

// FuzzVerifyToken: whatever a caller sends as a bearer token, Verify
// neither panics nor accepts one it did not sign with a full set of claims.
func FuzzVerifyToken(f *testing.F) {
	ca := testpki.New(f)
	good, err := SignToken(ca.Key, "alice", Operator, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Raw)
	f.Add(strings.Replace(good.Raw, ".", "..", 1))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.")
	f.Add("")
	v := Verifier{CAs: []*x509.Certificate{ca.Cert}}
	f.Fuzz(func(t *testing.T, token string) {
		id, err := v.Verify(token)
		if err != nil {
			return
		}
		if id.TokenID == "" || id.Name == "" || !id.Role.Allows(Viewer) {
			t.Fatalf("accepted %q as %+v: no id, name or role", token, id)
		}
	})
}
