package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/pki"
	"github.com/spf13/cobra"
)

// newCertCmd is `gtraind cert`: the cluster CA and the certificates it signs
// (issue 10, package pki).
func newCertCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cert",
		Short: "Create the cluster CA and issue node and client certificates",
		Long: `Create the cluster's certificate authority and issue certificates with it.

  gtraind cert init                  ca.crt, ca.key and gossip.key in --dir
  gtraind cert issue --node NAME --addr IP,...   NAME.crt/NAME.key for an agent
  gtraind cert issue --client NAME --role ROLE   NAME.crt/NAME.key for gctl

Keep ca.key off the nodes when you can: only issuing needs it. A node certificate
must list, with --addr (and --dns), every address other nodes and gctl dial that
node at (its --advertise-addr): TLS checks the address dialled against the
certificate. 127.0.0.1 and localhost are always included.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCertInitCmd(), newCertIssueCmd())
	return cmd
}

func newCertInitCmd() *cobra.Command {
	var dir string
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--dir DIR]",
		Short: "Create the cluster CA (ca.crt, ca.key) and a gossip key (gossip.key)",
		Example: `  gtraind cert init --dir /etc/gtrain/pki
  gtraind agent ... --gossip-key @/etc/gtrain/pki/gossip.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ca, err := pki.NewCA("", 0)
			if err != nil {
				return err
			}
			if err := pki.WriteCA(dir, ca, force); err != nil {
				return certErr(err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote %s and %s\n", filepath.Join(dir, pki.CACertFile), filepath.Join(dir, pki.CAKeyFile))
			return writeGossipKey(out, filepath.Join(dir, pki.GossipKeyFile), force)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write the CA into")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing CA (every certificate it signed stops being trusted)")
	return cmd
}

// writeGossipKey writes a fresh gossip key unless one is there (and not force).
func writeGossipKey(out io.Writer, path string, force bool) error {
	if _, err := os.Lstat(path); err == nil && !force {
		fmt.Fprintf(out, "kept %s\n", path)
		return nil
	}
	key, err := pki.NewGossipKey()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return fmt.Errorf("gossip key: %w", err)
	}
	fmt.Fprintf(out, "wrote %s (pass it to every agent: --gossip-key @%s)\n", path, path)
	return nil
}

type issueFlags struct {
	dir, node, client, role string
	addrs, dns              []string
	force                   bool
	tokenTTL                time.Duration
}

func newCertIssueCmd() *cobra.Command {
	var f issueFlags
	cmd := &cobra.Command{
		Use:   "issue (--node NAME [--addr IP,...] [--dns NAME,...] | --client NAME --role admin|operator|viewer)",
		Short: "Issue a node or client certificate signed by the CA in --dir",
		Example: `  gtraind cert issue --node n1 --addr 10.0.0.11
  gtraind cert issue --client alice --role operator`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			ca, err := pki.LoadCA(f.dir)
			if err != nil {
				return certErr(err)
			}
			is, err := ca.Issue(req)
			if err != nil {
				return certErr(err)
			}
			if err := pki.WriteIssued(f.dir, req.Name, is, f.force); err != nil {
				return certErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s (%s %s, valid until %s)\n", pki.CertPath(f.dir, req.Name),
				pki.KeyPath(f.dir, req.Name), req.Role, req.Name, is.Cert.NotAfter.Format("2006-01-02"))
			if req.Role == pki.RoleNode && len(req.IPs) == 0 && len(req.DNS) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s covers only 127.0.0.1 and localhost; give --addr with its advertise address for a cluster across hosts\n", req.Name)
			}
			if req.Role == pki.RoleNode {
				return nil
			}
			return writeToken(cmd.OutOrStdout(), f, req)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", ".", "directory holding ca.crt and ca.key; the certificate is written there")
	fl.StringVar(&f.node, "node", "", "issue a node certificate for the agent --node-name NAME")
	fl.StringVar(&f.client, "client", "", "issue a client certificate (for gctl) for NAME")
	fl.StringVar(&f.role, "role", "", "role of a client certificate: admin, operator or viewer")
	fl.StringSliceVar(&f.addrs, "addr", nil, "IP addresses the node is reached at (its --advertise-addr), comma separated")
	fl.StringSliceVar(&f.dns, "dns", nil, "DNS names the node is reached at, comma separated")
	fl.BoolVar(&f.force, "force", false, "replace an existing NAME.crt/NAME.key")
	fl.DurationVar(&f.tokenTTL, "token-ttl", auth.DefaultMaxLifetime,
		"how long the bearer token written with a client certificate (NAME.token) is valid; agents refuse one longer than their --token-max-lifetime")
	return cmd
}

// writeToken writes NAME.token beside a client certificate: the same
// identity and role as a bearer token, for a gctl context without
// certificates.
func writeToken(out io.Writer, f issueFlags, req pki.Request) error {
	role, err := auth.ParseRole(req.Role)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if f.tokenTTL <= 0 {
		return fmt.Errorf("%w: --token-ttl %s must be positive", errUsage, f.tokenTTL)
	}
	path, tok, err := auth.WriteClientToken(f.dir, filepath.Join(f.dir, pki.CACertFile), filepath.Join(f.dir, pki.CAKeyFile), req.Name, role, f.tokenTTL)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s (a bearer token for a gctl context's token_file, id %s, valid until %s; revoke it with `gctl token revoke %s`)\n",
		path, tok.ID, tok.Expires.UTC().Format(time.RFC3339), tok.ID)
	return nil
}

// request checks the flags and says what to issue.
func (f issueFlags) request() (pki.Request, error) {
	switch {
	case f.node != "" && f.client != "":
		return pki.Request{}, fmt.Errorf("%w: --node and --client both given: issue one certificate at a time", errUsage)
	case f.node == "" && f.client == "":
		return pki.Request{}, fmt.Errorf("%w: give --node NAME or --client NAME --role ROLE", errUsage)
	case f.node != "" && f.role != "":
		return pki.Request{}, fmt.Errorf("%w: --role is for --client; a node certificate acts as %s", errUsage, pki.RoleNode)
	case f.client != "" && (len(f.addrs) > 0 || len(f.dns) > 0):
		return pki.Request{}, fmt.Errorf("%w: --addr and --dns are for --node", errUsage)
	case f.client != "" && f.role == "":
		return pki.Request{}, fmt.Errorf("%w: --client needs --role admin, operator or viewer", errUsage)
	case f.client != "":
		return pki.Request{Name: f.client, Role: f.role}, nil
	}
	req := pki.Request{Name: f.node, Role: pki.RoleNode, DNS: f.dns}
	for _, a := range f.addrs {
		ip := net.ParseIP(a)
		if ip == nil {
			return req, fmt.Errorf("%w: --addr %q is not an IP address (names go to --dns)", errUsage, a)
		}
		req.IPs = append(req.IPs, ip)
	}
	return req, nil
}

// certErr makes bad input (a role, a name, a missing CA, a file in the way)
// exit 2.
func certErr(err error) error {
	for _, bad := range []error{pki.ErrBadRole, pki.ErrBadName, pki.ErrNoCA, pki.ErrExists, pki.ErrNotCA} {
		if errors.Is(err, bad) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	return err
}
