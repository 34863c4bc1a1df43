package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/gtrain/gtrain/auth"
)

// cookieName holds the user's bearer token: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page sends it), Secure (logins
// exist only under TLS), and __Host- so that it is this origin's alone (no
// Domain, Path /), not sent to another port's service of the same host by
// a cookie set there.
const cookieName = "__Host-gtrain_token"

// maxLoginBody bounds a login form before anyone is logged in.
const maxLoginBody = 64 << 10

// session is a logged-in visitor: who the token says they are, and the
// token the console calls the Control API with on their behalf.
type session struct {
	id    auth.Identity
	token string // "" without TLS
	csrf  string
}

// outgoing is ctx carrying the user's token to the Control API.
func (s session) outgoing(ctx context.Context) context.Context {
	if s.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token)
}

// session is the visitor of r. Without TLS everyone is the anonymous
// admin, as the Control API makes every caller; with TLS the cookie's token
// must verify against the CA (the API checks it again on every call).
func (c *Console) session(r *http.Request) (session, bool) {
	if c.ca == nil {
		return session{id: auth.Anonymous(), csrf: c.csrfFor("")}, true
	}
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return session{}, false
	}
	id, err := c.tokens.Verify(ck.Value)
	if err != nil {
		return session{}, false
	}
	return session{id: id, token: ck.Value, csrf: c.csrfFor(ck.Value)}, true
}

// csrfFor is the CSRF token of a session: a MAC of its bearer token under
// a key of this agent's run, so a page of this console can show it and no
// other site can compute it.
func (c *Console) csrfFor(token string) string {
	m := hmac.New(sha256.New, c.csrfKey)
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// csrfOK checks the CSRF token a POST carries (header X-CSRF-Token, or
// the form's csrf field).
func csrfOK(r *http.Request, s session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

// hasRole reports whether role (its name) allows need (its name): the
// pages show a button only to the roles the Control API lets use it.
func hasRole(role auth.Role, need string) bool {
	r, err := auth.ParseRole(need)
	return err == nil && role.Allows(r)
}

// pageData is what a page's template gets.
type pageData struct {
	Page, Title string
	Job, Worker string
	User        auth.Identity
	CSRF        string
	Login       bool // the console has logins (TLS)
	Error       string
}

// page serves one of the console's pages to a logged-in visitor; others
// go to the login form and come back.
func (c *Console) page(name, title string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		if !ok {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
			return
		}
		d := pageData{Page: name, Title: title, Job: r.PathValue("job"), Worker: r.PathValue("worker"),
			User: s.id, CSRF: s.csrf, Login: c.ca != nil}
		if d.Job != "" {
			d.Title = d.Job
		}
		c.render(w, name+".html", d)
	}
}

func (c *Console) render(w http.ResponseWriter, tmpl string, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := c.pages.ExecuteTemplate(w, tmpl, d); err != nil {
		c.cfg.Log.Warn("web console: render page", "page", tmpl, "err", err)
	}
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if c.ca == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.render(w, "login.html", pageData{Page: "login", Title: "Log in", Login: true})
}

// login checks the token against the CA before it keeps it, so a typo
// is answered on the form rather than by every page.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if c.ca == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if _, err := c.tokens.Verify(token); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		c.render(w, "login.html", pageData{Page: "login", Title: "Log in", Login: true,
			Error: "That token is not valid here: " + err.Error() + ". Ask an admin for one (gtraind cert issue --client NAME --role ROLE writes NAME.token)."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: true})
	http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s, ok := c.session(r)
	if ok && !csrfOK(r, s) {
		http.Error(w, "missing or wrong CSRF token: reload the page", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.ca != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a login's return address on this console: a path of
// its own, no scheme or host, and nothing a browser strips or reads as a
// slash (control characters, backslashes) that could make one.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	return next
}
