package client

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// NonFiniteGradient begins the message of a push a pserver refused
// (InvalidArgument) because it held a NaN or an infinity.
const NonFiniteGradient = "non-finite gradient"

// IsNonFinite reports whether err is a push refused for a NaN or an
// infinity in its gradient: the job diverged.
func IsNonFinite(err error) bool {
	s, _ := status.FromError(err) // unwraps a status wrapped with %w
	return s.Code() == codes.InvalidArgument && strings.Contains(s.Message(), NonFiniteGradient)
}
