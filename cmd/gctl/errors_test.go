package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/jobspec"
)

func TestExitCode(t *testing.T) {
	agent := func(c codes.Code) error {
		return &agentError{op: "get job \"x\"", addr: "127.0.0.1:7164", err: status.Error(c, "server says no")}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"usage", usagef("bad flag"), exitRejected},
		{"wrapped usage", fmt.Errorf("context: %w", usagef("bad flag")), exitRejected},
		{"config", fmt.Errorf("%w: broken", ErrConfig), exitRejected},
		{"invalid spec", fmt.Errorf("f.yaml: %w", &jobspec.FieldError{Field: "trainers", Msg: "must be at least 1"}), exitRejected},
		{"invalid name", fmt.Errorf("%w %q", jobspec.ErrInvalidName, "a_b"), exitRejected},
		{"InvalidArgument", agent(codes.InvalidArgument), exitRejected},
		{"NotFound", agent(codes.NotFound), exitRejected},
		{"AlreadyExists", agent(codes.AlreadyExists), exitRejected},
		{"bare NotFound status", status.Error(codes.NotFound, "no job"), exitRejected},
		{"Unavailable", agent(codes.Unavailable), exitFailure},
		{"FailedPrecondition", agent(codes.FailedPrecondition), exitFailure},
		{"DeadlineExceeded", agent(codes.DeadlineExceeded), exitFailure},
		{"Internal", agent(codes.Internal), exitFailure},
		{"PermissionDenied", agent(codes.PermissionDenied), exitFailure},
		{"Unauthenticated", agent(codes.Unauthenticated), exitFailure},
		{"job failed", fmt.Errorf("%w: job x FAILED", ErrJobNotSucceeded), exitFailure},
		{"not supported", fmt.Errorf("job scale is %w", ErrNotSupported), exitFailure},
		{"bad document", fmt.Errorf("%w: job list", ErrBadDocument), exitFailure},
		{"cancelled call", &agentError{op: "list jobs", err: context.Canceled}, exitFailure},
		{"plain error", errors.New("disk full"), exitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestAgentErrorMessages(t *testing.T) {
	tests := []struct {
		code codes.Code
		want []string
	}{
		{codes.Unavailable, []string{"cannot reach the gtrain agent at 10.0.0.1:7164 (from GCTL_ADDR)", "gtraind agent", "--addr or GCTL_ADDR"}},
		{codes.NotFound, []string{`get job "x"`, "server says no", "gctl job list"}},
		{codes.AlreadyExists, []string{"server says no", "--purge"}},
		{codes.InvalidArgument, []string{"rejected by the agent", "server says no"}},
		{codes.DeadlineExceeded, []string{"did not answer in time", "10.0.0.1:7164"}},
		{codes.PermissionDenied, []string{`get job "x": server says no`}},
		{codes.Unauthenticated, []string{"10.0.0.1:7164", "server says no", "token"}},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			err := &agentError{op: `get job "x"`, addr: "10.0.0.1:7164", from: envAddr, err: status.Error(tt.code, "server says no")}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
			if status.Code(err) != tt.code {
				t.Errorf("status.Code through the wrapper = %v, want %v", status.Code(err), tt.code)
			}
		})
	}
}

func TestUsageErrorIsErrUsage(t *testing.T) {
	err := fmt.Errorf("outer: %w", usagef("-n %d is negative", -1))
	if !errors.Is(err, ErrUsage) {
		t.Fatal("usage error does not match ErrUsage")
	}
	if err.Error() != "outer: -n -1 is negative" {
		t.Errorf("message %q carries more than the usage text", err.Error())
	}
}
