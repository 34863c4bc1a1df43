package console

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/pki"
)

// DefaultPoll is how often a page's stream asks the Control API what
// changed: a second keeps the pages live. Each ask is a whole read (every
// job's keys for the cluster and jobs pages; a job's status with its whole
// history, about 2 MiB at 10,000 passes, for a job page) between the
// console and its own agent; only the changes go on to the browser.
const DefaultPoll = time.Second

// maxDocument bounds one Control API answer the console reads: a
// 10,000-pass job's status with its history is about 2 MiB.
const maxDocument = 64 << 20

//go:embed assets
var assets embed.FS

// Config is what the console needs of the agent.
type Config struct {
	// APIAddr is the Control API the console calls: this agent's, at the
	// address it publishes (which its certificate covers).
	APIAddr string
	// TLS are the agent's files. With them the console serves HTTPS with
	// the node's certificate, verifies the API with the CA and checks
	// login tokens against it; without them it serves plain HTTP and every
	// visitor is the anonymous admin.
	TLS pki.Files
	// TokenMaxLifetime is the agent's --token-max-lifetime (0: the default).
	TokenMaxLifetime time.Duration
	// Hosts are the names and addresses, besides loopback and localhost,
	// that a browser may reach the console by without TLS (the Host
	// header): with no login there, a page of another site that rebinds its
	// DNS name to this address must not get an admin's console.
	Hosts []string
	// Poll is how often a page's stream asks the API; zero: DefaultPoll.
	Poll time.Duration
	// Clock paces the streams (nil: clock.System).
	Clock clock.Clock
	Log   *slog.Logger
}

// Console is the web console of one agent.
type Console struct {
	cfg     Config
	ca      *x509.Certificate // nil without TLS: no login, everyone is admin
	tokens  auth.Verifier     // with TLS: checks a visitor's token
	conn    *grpc.ClientConn
	ctl     api.ControlClient
	pages   *template.Template
	csrfKey []byte
	srv     *http.Server
}

// New prepares the console; nothing is served until Serve. It fails when
// the TLS files cannot be read.
func New(cfg Config) (*Console, error) {
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Poll == 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, csrfKey: make([]byte, 32)}
	if _, err := rand.Read(c.csrfKey); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg.TLS.Enabled() {
		cas, err := auth.ReadCertificates(cfg.TLS.CA)
		if err != nil {
			return nil, fmt.Errorf("web console: --tls-ca: %w", err)
		}
		c.ca = cas[0]
		// Login checks a token against every CA of the bundle, as the API
		// does; the API also checks lifetime and revocation on every call.
		c.tokens = auth.Verifier{CAs: cas, MaxLifetime: cfg.TokenMaxLifetime}
		pool := x509.NewCertPool()
		for _, ca := range cas {
			pool.AddCert(ca)
		}
		// No client certificate: the API would take the node's certificate
		// (an admin) over the user's token.
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool})
	}
	conn, err := grpc.NewClient(cfg.APIAddr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxDocument)))
	if err != nil {
		return nil, fmt.Errorf("web console: dial the Control API at %s: %w", cfg.APIAddr, err)
	}
	c.conn, c.ctl = conn, api.NewControlClient(conn)
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	c.srv = &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn)}
	if c.pages, err = template.New("").Funcs(template.FuncMap{"hasRole": hasRole}).ParseFS(sub, "*.html"); err != nil {
		return nil, err
	}
	return c, nil
}

// Handler is the console's routes. POSTs from another origin are refused
// (the browser says where a request comes from), besides the CSRF token
// each one must carry (session.go).
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", c.loginPage)
	mux.HandleFunc("POST /login", c.login)
	mux.HandleFunc("POST /logout", c.logout)
	mux.HandleFunc("GET /{$}", c.page("cluster", "Cluster"))
	mux.HandleFunc("GET /jobs", c.page("jobs", "Jobs"))
	mux.HandleFunc("GET /jobs/{job}", c.page("job", "Job"))
	mux.HandleFunc("GET /jobs/{job}/logs/{worker}", c.page("log", "Log"))
	mux.HandleFunc("GET /stream/nodes", c.streamNodes)
	mux.HandleFunc("GET /stream/jobs", c.streamJobs)
	mux.HandleFunc("GET /stream/jobs/{job}", c.streamJob)
	mux.HandleFunc("GET /stream/jobs/{job}/logs/{worker}", c.streamLog)
	mux.HandleFunc("POST /jobs/{job}/stop", c.action(c.stop))
	mux.HandleFunc("POST /jobs/{job}/scale", c.action(c.scale))
	mux.HandleFunc("POST /nodes/{node}/drain", c.action(c.drain))
	mux.HandleFunc("POST /nodes/{node}/undrain", c.action(c.undrain))
	return c.checkHost(http.NewCrossOriginProtection().Handler(securityHeaders(mux)))
}

// checkHost refuses, without TLS, a request for a host the console is not
// (DNS rebinding: a foreign page's origin then looks like the console's).
// With TLS the browser itself refuses a name the certificate does not have.
func (c *Console) checkHost(h http.Handler) http.Handler {
	if c.cfg.TLS.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if host == "localhost" || ip != nil && ip.IsLoopback() || host != "" && slices.Contains(c.cfg.Hosts, host) {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("this console does not answer for host %q: open it by its own address", r.Host), http.StatusMisdirectedRequest)
	})
}

// securityHeaders keeps the pages out of frames and their script to the
// console's own files.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// Serve serves the console on lis (HTTPS with TLS) until Close.
func (c *Console) Serve(lis net.Listener) error {
	if c.cfg.TLS.Enabled() {
		conf, err := c.cfg.TLS.ServerConfig()
		if err != nil {
			return fmt.Errorf("web console TLS: %w", err)
		}
		conf.ClientCAs, conf.ClientAuth = nil, tls.NoClientCert // a browser logs in with a token
		c.srv.TLSConfig = conf
		err = c.srv.ServeTLS(lis, "", "") // HTTP/2 too: every open page holds a stream
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
	err := c.srv.Serve(lis)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving, ends every stream and closes the API connection.
func (c *Console) Close() {
	_ = c.srv.Close()
	_ = c.conn.Close()
}
