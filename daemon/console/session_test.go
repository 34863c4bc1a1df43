package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/pki"
)

// testConsole is a console with logins (a real cluster CA); its Control
// API is never reached by these tests.
func testConsole(t *testing.T) (*httptest.Server, *pki.CA) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.NewCA("", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteCA(dir, ca, false); err != nil {
		t.Fatal(err)
	}
	node, err := ca.IssueNode("n1", nil, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteIssued(dir, "n1", node, false); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{APIAddr: "127.0.0.1:1", TLS: pki.Files{CA: filepath.Join(dir, pki.CACertFile),
		Cert: pki.CertPath(dir, "n1"), Key: pki.KeyPath(dir, "n1")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() { srv.Close(); c.Close() })
	return srv, ca
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// TestLoginAndCSRF: a visitor without a login is sent to the form (pages)
// or refused (streams, buttons); a token the CA did not sign is refused
// at the form; a good one becomes an HttpOnly, SameSite=Strict, Secure
// cookie; a button's POST without the page's CSRF token, or from another
// site, is refused before the Control API is asked.
func TestLoginAndCSRF(t *testing.T) {
	srv, ca := testConsole(t)
	cl := &http.Client{CheckRedirect: noRedirect}
	resp, err := cl.Get(srv.URL + "/jobs/j1")
	if err != nil {
		t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/login?next=%2Fjobs%2Fj1" {
		t.Errorf("a page without login: %d to %q, want 303 to the login form", resp.StatusCode, loc)
	}
	if resp, _ := cl.Get(srv.URL + "/stream/jobs"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a stream without login: %d, want 401", resp.StatusCode)
	}
	if resp, _ := cl.PostForm(srv.URL+"/login", url.Values{"token": {"not-a-token"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a bad token: %d, want 401", resp.StatusCode)
	}
	signed, err := auth.SignToken(ca.Key, "bob", auth.Viewer, time.Hour)
	token := signed.Raw
	if err != nil {
		t.Fatal(err)
	}
	resp, err = cl.PostForm(srv.URL+"/login?next=//evil.example", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	ck := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(ck) != 1 ||
		!ck[0].HttpOnly || !ck[0].Secure || ck[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d to %q, cookies %+v; want 303 to / and one HttpOnly, Secure, SameSite=Strict cookie",
			resp.StatusCode, resp.Header.Get("Location"), ck)
	}
	post := func(header http.Header) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/jobs/j1/stop", strings.NewReader(""))
		req.Header = header
		req.AddCookie(ck[0])
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(http.Header{}); code != http.StatusForbidden {
		t.Errorf("a stop without the CSRF token: %d, want 403", code)
	}
	if code := post(http.Header{"X-Csrf-Token": {"0123"}}); code != http.StatusForbidden {
		t.Errorf("a stop with a wrong CSRF token: %d, want 403", code)
	}
	if code := post(http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}}); code != http.StatusForbidden {
		t.Errorf("a cross-site stop: %d, want 403", code)
	}
	for _, tc := range []struct {
		role auth.Role
		stop bool
	}{{auth.Viewer, false}, {auth.Operator, true}, {auth.Admin, true}} {
		tok, err := auth.SignToken(ca.Key, "u", tc.role, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/jobs/j1", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: tok.Raw})
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `id="stop"`) != tc.stop {
			t.Errorf("the job page of a %s: %d, stop button %v, want 200 and %v", tc.role, resp.StatusCode, !tc.stop, tc.stop)
		}
	}
}

// A login returns only to a path of this console: nothing a browser turns
// into another host (a tab or newline it strips, a backslash it reads as a
// slash, a scheme).
func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/jobs/j1?x=1":         "/jobs/j1?x=1",
		"//evil.example":       "/",
		"/\t/evil.example":     "/",
		"/%09/evil.example":    "/%09/evil.example", // still escaped: a path, not a host
		"/\\evil.example":      "/",
		"https://evil.example": "/",
		"javascript:alert(1)":  "/",
		"":                     "/",
		"jobs":                 "/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// Without TLS (no login: every visitor is admin) the console answers only
// for loopback, localhost and its own names: a foreign page whose DNS name
// was rebound to this address is refused.
func TestHostCheckWithoutTLS(t *testing.T) {
	c, err := New(Config{APIAddr: "127.0.0.1:1", Hosts: []string{"node-a", "10.0.0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h := c.Handler()
	for host, want := range map[string]int{
		"127.0.0.1:8164":         http.StatusOK,
		"[::1]:8164":             http.StatusOK,
		"localhost:8164":         http.StatusOK,
		"node-a:8164":            http.StatusOK,
		"10.0.0.5:8164":          http.StatusOK,
		"evil.example:8164":      http.StatusMisdirectedRequest,
		"127.0.0.1.evil.example": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/static/console.css", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("host %s: %d, want %d", host, rec.Code, want)
		}
	}
}
