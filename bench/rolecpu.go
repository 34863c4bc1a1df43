package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/metrics"
	dto "github.com/prometheus/client_model/go"
)

// roleCPU is the CPU time (user + system) each role process of a job has
// used so far, by role ("trainer", "pserver", "master"), summed over the
// processes of a role. It reads /proc (Linux), as top does: the agent
// runs a job's roles as its own child processes, `gtraind ROLE --job JOB
// ... --data-dir DIR`; only those under work count (another bench on the
// machine may run a job of the same name).
func roleCPU(job, work string) (map[string]time.Duration, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for _, d := range dirs {
		role, ok := jobRole(d, job, work)
		if !ok {
			continue
		}
		if t, err := procCPU(d); err == nil {
			out[role] += t
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no process of job %s in /proc", job)
	}
	return out, nil
}

// jobRole is the role of the gtraind process in dir if it is one of job's
// with its data dir under work.
func jobRole(dir, job, work string) (string, bool) {
	cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return "", false
	}
	args := strings.Split(string(bytes.TrimRight(cmd, "\x00")), "\x00")
	if len(args) < 4 || filepath.Base(args[0]) != "gtraind" || args[2] != "--job" || args[3] != job {
		return "", false
	}
	for i, a := range args[:len(args)-1] {
		if a == "--data-dir" && strings.HasPrefix(args[i+1], work+"/") {
			return args[1], true
		}
	}
	return "", false
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux platform Go supports (sysconf(_SC_CLK_TCK) without cgo).
const clockTicks = 100

// procCPU is utime + stime of the process in dir (/proc/PID/stat fields
// 14 and 15, counted after the command name, which may hold spaces).
func procCPU(dir string) (time.Duration, error) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s/stat: no command name", dir)
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("%s/stat: %d fields", dir, len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/stat: %w", dir, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// stepCPU is what cpuPerStep measures over a window of steps.
type stepCPU struct {
	roles map[string]float64 // CPU ms per step, by role
	// computeMs is the trainers' mean wall ms a micro-batch's computation
	// took (gtrain_trainer_compute_seconds), unless computeErr says why not.
	computeMs  float64
	computeErr error
}

// cpuPerStep measures, over the next steps steps of a running job, the
// CPU milliseconds per step of each role (all its processes together, those
// of the agent whose work dir is work): unlike records/s it barely moves
// when other work shares the machine. It also reads the trainers' compute
// time over the same steps.
func (m *measurer) cpuPerStep(steps int64, work string) (stepCPU, error) {
	p, err := m.newStepPoller(0, 30*time.Second)
	if err != nil {
		return stepCPU{}, err
	}
	defer p.close()
	from, err := p.read()
	if err != nil {
		return stepCPU{}, err
	}
	computeBefore, computeErr := computeSeconds(m.job, work) // before roleCPU: the scrape's own CPU stays out
	before, err := roleCPU(m.job, work)
	if err != nil {
		return stepCPU{}, err
	}
	to, err := p.waitStep(60*time.Second, stepPoll, from.step+steps)
	if err != nil {
		return stepCPU{}, err
	}
	after, err := roleCPU(m.job, work)
	if err != nil {
		return stepCPU{}, err
	}
	out := stepCPU{roles: map[string]float64{}}
	for role, t := range after {
		out.roles[role] = float64((t - before[role]).Microseconds()) / 1000 / float64(to.step-from.step)
	}
	computeAfter, err := computeSeconds(m.job, work)
	switch {
	case computeErr != nil:
		out.computeErr = computeErr
	case err != nil:
		out.computeErr = err
	case computeAfter.count <= computeBefore.count:
		out.computeErr = fmt.Errorf("no micro-batch computed in %d steps", to.step-from.step)
	default:
		out.computeMs = 1000 * (computeAfter.sum - computeBefore.sum) / (computeAfter.count - computeBefore.count)
	}
	return out, nil
}

// computeTotals is the sum and count of gtrain_trainer_compute_seconds.
type computeTotals struct{ sum, count float64 }

// computeSeconds reads gtrain_trainer_compute_seconds of each trainer of
// job under work (the agent's data dir is work/agent; its roles serve
// their metrics when it has --metrics-addr), and sums them.
func computeSeconds(job, work string) (computeTotals, error) {
	addrs, err := filepath.Glob(jobdir.MetricsAddr(filepath.Join(work, "agent"), job, "trainer-*"))
	if err != nil || len(addrs) == 0 {
		return computeTotals{}, fmt.Errorf("no trainer of job %s serves metrics under %s", job, work)
	}
	var tot computeTotals
	for _, f := range addrs {
		mfs, err := metrics.ScrapeRole(f)
		if err != nil {
			return computeTotals{}, err
		}
		h, err := computeHistogram(mfs)
		if err != nil {
			return computeTotals{}, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		tot.sum += h.GetSampleSum()
		tot.count += float64(h.GetSampleCount())
	}
	return tot, nil
}

// computeHistogram finds gtrain_trainer_compute_seconds among a trainer's
// metric families.
func computeHistogram(mfs []*dto.MetricFamily) (*dto.Histogram, error) {
	for _, mf := range mfs {
		if mf.GetName() == "gtrain_trainer_compute_seconds" && len(mf.GetMetric()) == 1 && mf.GetMetric()[0].GetHistogram() != nil {
			return mf.GetMetric()[0].GetHistogram(), nil
		}
	}
	return nil, fmt.Errorf("no gtrain_trainer_compute_seconds histogram among its %d metric families", len(mfs))
}
