package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// TestWebConsole (issue 22): a real agent with TLS serves the web console
// (--ui-addr) while it trains a real job, and Debian's chromium, headless,
// drives it. An operator's page shows the pass advancing and the loss
// curve drawn; a SIGKILLed trainer appears as a restart in the workers
// table and in the events, with the count gctl shows; a viewer sees no
// stop button, and a stop forged with the viewer's login, or without the
// page's CSRF token, is refused while the job runs on; the operator's stop
// button stops it. Screenshots go to $GTRAIN_TEST_ARTIFACTS/console.
func TestWebConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes and a browser")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("SKIPPED, NOT TESTED: the web console's browser test needs Debian's chromium (apt-get install chromium)")
	}
	work := t.TempDir()
	certs := filepath.Join(work, "pki")
	e2erig.CertCmd(t, "init", "--dir", certs)
	e2erig.CertCmd(t, "issue", "--dir", certs, "--node", "e2e-node", "--addr", "127.0.0.1")
	e2erig.CertCmd(t, "issue", "--dir", certs, "--client", "alice", "--role", "operator")
	e2erig.CertCmd(t, "issue", "--dir", certs, "--client", "bob", "--role", "viewer")
	conf := filepath.Join(work, "gctl.yaml") // gctl acts as alice, by token
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s}\n    token_file: %s\n",
		filepath.Join(certs, pki.CACertFile), filepath.Join(certs, "alice.token"))), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GCTL_CONFIG", conf)
	ui := e2erig.FreePort(t)
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent"), "--ui-addr", ui, "--tls-ca", filepath.Join(certs, pki.CACertFile),
		"--tls-cert", pki.CertPath(certs, "e2e-node"), "--tls-key", pki.KeyPath(certs, "e2e-node"))
	e2erig.Housing(t, filepath.Join(work, "data"))
	e2erig.StartDetached(t, a, fitALineJob("console", jobspec.ModeSync, 5000, "data"))
	e2erig.WaitJob(t, a, "console", "the job to train", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 0 })

	b := newBrowser(t, chromium, "https://"+ui)
	b.login(t, readToken(t, certs, "alice"))
	b.open(t, "/jobs/console")
	first := b.waitInt(t, "the page to show a pass", `parseInt(document.querySelector("#pass").textContent)`, func(p int) bool { return p >= 0 })
	b.waitInt(t, "the pass to advance", `parseInt(document.querySelector("#pass").textContent)`, func(p int) bool { return p > first })
	b.waitTrue(t, "a loss curve drawn", `(() => { const l = document.querySelector("#chart-pass polyline");
		return !!l && l.getAttribute("points").split(" ").length >= 2; })()`)
	b.waitTrue(t, "the operator's stop button", `!!document.querySelector("#stop") && !document.querySelector("#actions").hidden`)
	b.screenshot(t, "job-operator.png")

	killed := e2erig.JobStatus(t, a, "console").Trainers[0]
	if err := syscall.Kill(killed.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL %s (pid %d): %v", killed.Name, killed.PID, err)
	}
	row := fmt.Sprintf(`document.querySelector("#w-%s .restarts")`, killed.Name)
	b.waitInt(t, "the restart in the workers table", `parseInt(`+row+`?.textContent)`, func(n int) bool { return n >= 1 })
	b.waitTrue(t, "the restart in the events", fmt.Sprintf(`[...document.querySelectorAll("#events li")].some(li => li.textContent.includes(%q) && li.textContent.includes("restarting"))`, killed.Name+" exited"))
	shown := b.waitInt(t, "the restart count", `parseInt(`+row+`.textContent)`, func(int) bool { return true })
	for _, tr := range e2erig.JobStatus(t, a, "console").Trainers {
		if tr.Name == killed.Name && tr.Restarts != shown {
			t.Errorf("the console shows %d restarts of %s, gctl %d", shown, killed.Name, tr.Restarts)
		}
	}
	b.screenshot(t, "job-restart.png")
	b.phoneScreenshot(t, "job-phone.png")

	b.logout(t)
	b.login(t, readToken(t, certs, "bob"))
	b.open(t, "/jobs/console")
	b.waitTrue(t, "the viewer's job page", `document.querySelector("#state").textContent === "RUNNING"`)
	if b.eval(t, `document.querySelector("#stop") !== null`) == "true" {
		t.Errorf("a viewer sees the stop button")
	}
	forged := b.eval(t, `fetch("/jobs/console/stop", {method: "POST", headers: {"X-CSRF-Token": document.body.dataset.csrf}}).then(async r => r.status + " " + (await r.json()).message)`)
	if !strings.HasPrefix(forged, "403 ") || !strings.Contains(forged, "bob (viewer) may not stop jobs") {
		t.Errorf("a viewer's forged stop: %q, want 403 naming the role needed", forged)
	}
	noToken := b.eval(t, `fetch("/jobs/console/stop", {method: "POST"}).then(r => String(r.status))`)
	if noToken != "403" {
		t.Errorf("a stop without the CSRF token: HTTP %s, want 403", noToken)
	}
	assertCrossSiteRefused(t, "https://"+ui, certs)
	b.screenshot(t, "job-viewer.png")
	if st := e2erig.JobStatus(t, a, "console"); st.State != api.StateRunning {
		t.Fatalf("after the refused stops the job is %s, want RUNNING", st.State)
	}

	b.logout(t)
	b.login(t, readToken(t, certs, "alice"))
	b.open(t, "/jobs/console")
	b.waitTrue(t, "the stop button", `!!document.querySelector("#stop") && !document.querySelector("#actions").hidden`)
	b.eval(t, `window.confirm = () => true; document.querySelector("#stop").click(); "clicked"`)
	b.waitTrue(t, "the job stopped", `document.querySelector("#state").textContent === "STOPPED"`)
	if st := e2erig.JobStatus(t, a, "console"); st.State != api.StateStopped {
		t.Errorf("after the stop button the job is %s, want STOPPED", st.State)
	}
}

// assertCrossSiteRefused: a POST another site's page makes with the
// operator's cookie is refused, whatever its form holds.
func assertCrossSiteRefused(t *testing.T, base, certs string) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(certs, pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	req, _ := http.NewRequest(http.MethodPost, base+"/jobs/console/stop", strings.NewReader("csrf=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	req.AddCookie(&http.Cookie{Name: "gtrain_token", Value: readToken(t, certs, "alice")})
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site stop with the operator's cookie: HTTP %d, want 403", resp.StatusCode)
	}
}

func readToken(t *testing.T, certs, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(certs, name+".token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// browser is a headless chromium on the console at base.
type browser struct {
	ctx       context.Context
	base      string
	artifacts string
}

func newBrowser(t *testing.T, chromium, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.WindowSize(1280, 1000), chromedp.Flag("ignore-certificate-errors", true)) // the test's own CA
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser on ctx, not on a call's shorter one
		t.Fatalf("start chromium: %v", err)
	}
	dir := os.Getenv("GTRAIN_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gtrain-test-artifacts")
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return &browser{ctx: ctx, base: base, artifacts: dir}
}

func (b *browser) run(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	b.run(t, "open "+path, chromedp.Navigate(b.base+path))
}

// eval is the value of a JavaScript expression (a promise's, awaited) as
// text: a string as it is, anything else as JSON.
func (b *browser) eval(t *testing.T, expr string) string {
	t.Helper()
	s, err := b.try(expr)
	if err != nil {
		t.Fatalf("browser: %s: %v", expr, err)
	}
	return s
}

// try is eval for the waits, where a page that is still loading may fail.
func (b *browser) try(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	j, _ := json.Marshal(v)
	return string(j), nil
}

// pageText is the start of the page's text, for a wait's failure.
const pageText = `document.body ? location.pathname + ": " + document.body.innerText.slice(0, 800) : "(loading)"`

func (b *browser) waitTrue(t *testing.T, what, expr string) {
	t.Helper()
	wait.Eventually(t, 60*time.Second, what, func() (bool, string) {
		v, err := b.try("(() => { try { return !!(" + expr + "); } catch (e) { return false; } })()")
		text, _ := b.try(pageText)
		return err == nil && v == "true", text
	})
}

func (b *browser) waitInt(t *testing.T, what, expr string, ok func(int) bool) int {
	t.Helper()
	var n int
	wait.Eventually(t, 60*time.Second, what, func() (bool, string) {
		s, err := b.try("(() => { try { const v = " + expr + "; return Number.isNaN(v) ? -1 : v; } catch (e) { return -1; } })()")
		text, _ := b.try(pageText)
		if _, serr := fmt.Sscan(s, &n); err != nil || serr != nil || n < 0 {
			return false, text
		}
		return ok(n), fmt.Sprintf("%d; %s", n, text)
	})
	return n
}

func (b *browser) login(t *testing.T, token string) {
	t.Helper()
	b.open(t, "/login")
	b.eval(t, fmt.Sprintf(`document.querySelector("#token").value = %q; setTimeout(() => document.querySelector("form.login").submit()); "sent"`, token))
	b.waitTrue(t, "the login", `location.pathname === "/" && document.querySelector("#nodes") !== null`)
}

func (b *browser) logout(t *testing.T) {
	t.Helper()
	b.eval(t, `setTimeout(() => document.querySelector('form[action="/logout"]').submit()); "sent"`)
	b.waitTrue(t, "the logout", `location.pathname === "/login"`)
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.artifacts, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// phoneScreenshot is the page at a phone's width.
func (b *browser) phoneScreenshot(t *testing.T, name string) {
	t.Helper()
	b.run(t, "phone viewport", chromedp.EmulateViewport(390, 844))
	b.screenshot(t, name)
	b.run(t, "laptop viewport", chromedp.EmulateViewport(1280, 1000))
}
