package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// scrapeTimeout bounds the scrape of one child: a child that hangs must not
// hold up the agent's /metrics.
const scrapeTimeout = 3 * time.Second

// Worker is a role process the agent supervises, as its /metrics shows it.
type Worker struct {
	Job, Role, Worker string
	AddrFile          string // where the child wrote its metrics address
	Restarts          int
	Running           bool
}

// NewAgentHandler is the agent's /metrics: its own metrics about the
// workers listed by workers (restarts, up) and each running worker's own
// metrics, scraped now, with job, role and worker labels added.
func NewAgentHandler(workers func() []Worker) http.Handler {
	own := prometheus.NewRegistry()
	scrapeErrors := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gtrain_agent_scrape_errors_total",
		Help: "Scrapes of a role process's metrics that failed (e.g. while it restarts)."}, []string{"job", "role", "worker"})
	own.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
		workerCollector{workers: workers}, scrapeErrors)
	children := childGatherer{workers: workers, errors: scrapeErrors, client: newScrapeClient()}
	// The children first: a failed scrape is counted in the same answer.
	return promhttp.HandlerFor(prometheus.Gatherers{children, own}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

var (
	restartsDesc = prometheus.NewDesc("gtrain_worker_restarts_total",
		"Restarts of a role process by this agent (crashes and lost contact).", []string{"job", "role", "worker"}, nil)
	upDesc = prometheus.NewDesc("gtrain_worker_up",
		"1 while the role process runs on this node.", []string{"job", "role", "worker"}, nil)
)

// workerCollector exposes the agent's view of its workers.
type workerCollector struct{ workers func() []Worker }

func (c workerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- restartsDesc; ch <- upDesc }

func (c workerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, w := range c.workers() {
		up := 0.0
		if w.Running {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(w.Restarts), w.Job, w.Role, w.Worker)
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up, w.Job, w.Role, w.Worker)
	}
}

// childGatherer scrapes the running workers' own registries.
type childGatherer struct {
	workers func() []Worker
	errors  *prometheus.CounterVec
	client  *http.Client
}

// Gather scrapes every running worker at once and merges their families,
// each metric labelled with its worker. A worker that does not answer is
// left out (and counted in gtrain_agent_scrape_errors_total).
func (g childGatherer) Gather() ([]*dto.MetricFamily, error) {
	var running []Worker
	for _, w := range g.workers() {
		if w.Running && w.AddrFile != "" {
			running = append(running, w)
		}
	}
	got := make([][]*dto.MetricFamily, len(running))
	var wg sync.WaitGroup
	for i, w := range running {
		wg.Go(func() {
			mfs, err := g.scrape(w)
			if err != nil {
				g.errors.WithLabelValues(w.Job, w.Role, w.Worker).Inc()
				return
			}
			got[i] = mfs
		})
	}
	wg.Wait()
	return mergeFamilies(running, got), nil
}

// newScrapeClient is the HTTP client a role's metrics are scraped with:
// bounded by scrapeTimeout, and straight to the role, never through a proxy.
func newScrapeClient() *http.Client {
	return &http.Client{Timeout: scrapeTimeout, Transport: &http.Transport{Proxy: nil}}
}

// ScrapeRole reads the metrics a role process serves at the address it
// wrote into addrFile (ServeRole), as the agent's handler gathers them:
// for a reader without an agent's handler (the bench).
func ScrapeRole(addrFile string) ([]*dto.MetricFamily, error) {
	return childGatherer{client: newScrapeClient()}.scrape(Worker{AddrFile: addrFile, Worker: filepath.Base(addrFile)})
}

// scrape reads one worker's metrics, in the protobuf exposition.
func (g childGatherer) scrape(w Worker) ([]*dto.MetricFamily, error) {
	addr, err := os.ReadFile(w.AddrFile)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+strings.TrimSpace(string(addr))+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics of %s/%s: %s", w.Job, w.Worker, resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var out []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("metrics of %s/%s: %w", w.Job, w.Worker, err)
		}
		out = append(out, mf)
	}
}

// mergeFamilies joins the families scraped from workers (got[i] from
// workers[i]) by name, adding the labels job, role and worker to each
// metric, in name order.
func mergeFamilies(workers []Worker, got [][]*dto.MetricFamily) []*dto.MetricFamily {
	byName := map[string]*dto.MetricFamily{}
	for i, mfs := range got {
		w := workers[i]
		extra := []*dto.LabelPair{
			{Name: proto.String("job"), Value: proto.String(w.Job)},
			{Name: proto.String("role"), Value: proto.String(w.Role)},
			{Name: proto.String("worker"), Value: proto.String(w.Worker)},
		}
		for _, mf := range mfs {
			dst := byName[mf.GetName()]
			if dst == nil {
				dst = &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type, Unit: mf.Unit}
				byName[mf.GetName()] = dst
			}
			for _, m := range mf.Metric {
				m.Label = withLabels(m.Label, extra)
				dst.Metric = append(dst.Metric, m)
			}
		}
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		out = append(out, mf)
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// withLabels adds extra to labels (a child's own label of the same name
// is replaced: the agent knows which worker it scraped), sorted by name.
func withLabels(labels, extra []*dto.LabelPair) []*dto.LabelPair {
	out := slices.DeleteFunc(slices.Clone(labels), func(l *dto.LabelPair) bool {
		return slices.ContainsFunc(extra, func(e *dto.LabelPair) bool { return e.GetName() == l.GetName() })
	})
	out = append(out, extra...)
	slices.SortFunc(out, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}
