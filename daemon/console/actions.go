package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
)

// actionTimeout bounds one button's Control API call.
const actionTimeout = 30 * time.Second

// result is a button's answer, for the page to announce.
type result struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// action wraps a button's call: a logged-in visitor, the session's CSRF
// token, then the Control API call made with the visitor's token, whose
// refusal (a viewer stopping, an operator stopping another's job) is the
// answer.
func (c *Console) action(call func(context.Context, *http.Request) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		switch {
		case !ok:
			reply(w, http.StatusUnauthorized, result{Message: "log in first"})
			return
		case !csrfOK(r, s):
			reply(w, http.StatusForbidden, result{Message: "missing or wrong CSRF token: reload the page and try again"})
			return
		}
		ctx, cancel := context.WithTimeout(s.outgoing(r.Context()), actionTimeout)
		defer cancel()
		msg, err := call(ctx, r)
		if err != nil {
			reply(w, httpCode(err), result{Message: status.Convert(err).Message()})
			return
		}
		reply(w, http.StatusOK, result{OK: true, Message: msg})
	}
}

func reply(w http.ResponseWriter, code int, v result) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// httpCode is the HTTP status of a Control API error.
func httpCode(err error) int {
	switch status.Code(err) {
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	}
	return http.StatusBadGateway
}

func (c *Console) stop(ctx context.Context, r *http.Request) (string, error) {
	job := r.PathValue("job")
	resp, err := c.ctl.StopJob(ctx, &api.StopJobRequest{Name: job})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("job %s: %s", job, resp.GetState()), nil
}

func (c *Console) scale(ctx context.Context, r *http.Request) (string, error) {
	job := r.PathValue("job")
	n, err := strconv.ParseInt(r.PostFormValue("trainers"), 10, 32)
	if err != nil || n < 0 {
		return "", status.Errorf(codes.InvalidArgument, "trainers %q: want a whole number", r.PostFormValue("trainers"))
	}
	t := int32(n)
	resp, err := c.ctl.ScaleJob(ctx, &api.ScaleJobRequest{Name: job, Trainers: &t})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("job %s: trainers %d → %d", job, resp.GetPreviousTrainers(), resp.GetTrainers()), nil
}

func (c *Console) drain(ctx context.Context, r *http.Request) (string, error) {
	node := r.PathValue("node")
	if _, err := c.ctl.DrainNode(ctx, &api.NodeRequest{Name: node}); err != nil {
		return "", err
	}
	return "node " + node + " draining", nil
}

func (c *Console) undrain(ctx context.Context, r *http.Request) (string, error) {
	node := r.PathValue("node")
	if _, err := c.ctl.UndrainNode(ctx, &api.NodeRequest{Name: node}); err != nil {
		return "", err
	}
	return "node " + node + " takes work again", nil
}
