package coord

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Dial connects to etcd and checks that it answers. The client's own
// warnings (an endpoint that does not answer, a lost watch) go to log at
// warn level; nil drops them.
func Dial(ctx context.Context, endpoints []string, log *slog.Logger) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("no etcd endpoints given (--etcd-endpoints)")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zapToSlog(log),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Get(cctx, Root+"ping"); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd %s does not answer: %w", strings.Join(endpoints, ","), err)
	}
	return cli, nil
}

// SplitEndpoints turns "a,b" into ["http://a","http://b"], adding the scheme where missing.
func SplitEndpoints(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.Contains(e, "://") {
			e = "http://" + e
		}
		out = append(out, e)
	}
	return out
}
