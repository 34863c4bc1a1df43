package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/credentials"
)

// bearer is a context's bearer token (docs/reference.md#gctl), inline or in a file.
type bearer struct {
	token string // inline
	file  string // absolute path of token_file
	// Where it comes from, for the messages.
	context, config string
}

// credentials is the token as per-call credentials, nil without one. A
// token is a password: it goes only over TLS, so a context with a token
// and no tls files is refused rather than sending it in the clear.
func (b bearer) credentials(tls bool) (credentials.PerRPCCredentials, error) {
	token := b.token
	if b.file != "" {
		raw, err := os.ReadFile(b.file)
		if err != nil {
			return nil, fmt.Errorf("%w: context %q in %s: token_file: %v", ErrConfig, b.context, b.config, err)
		}
		token = strings.TrimSpace(string(raw))
		if token == "" {
			return nil, fmt.Errorf("%w: context %q in %s: token_file %s is empty", ErrConfig, b.context, b.config, b.file)
		}
	}
	if token == "" {
		return nil, nil
	}
	if !tls {
		return nil, fmt.Errorf("%w: context %q in %s has a bearer token but no tls files: a token is only sent over TLS; add tls.ca (the cluster CA)",
			ErrConfig, b.context, b.config)
	}
	return tokenCredentials(token), nil
}

// tokenCredentials sends "authorization: Bearer T" with every call.
type tokenCredentials string

func (t tokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity makes gRPC itself refuse to send the token
// over a plaintext connection.
func (tokenCredentials) RequireTransportSecurity() bool { return true }
