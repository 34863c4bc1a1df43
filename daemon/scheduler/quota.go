package scheduler

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// Quotas (`gctl quota set`): a user's placed jobs together may ask at most
// their owner's quota of cpu, memory and gpus, and at most so many of them
// may be placed. A job none of whose workers is placed is placed only
// while its whole request fits in what its owner has left; otherwise it
// stays PENDING and its reason says which limit and by how much. Workers of
// a job already placed (a trainer growing back, a worker moving) are not
// held back: the quota gates the start of a job, not its recovery.

// quotaUse is what one user's placed jobs ask.
type quotaUse struct {
	Request
	Jobs int
}

// quotaUsage sums the requests of every placed worker of the jobs that
// have not ended, by owner, and counts the jobs with a placed worker.
func quotaUsage(jobs []clusterJob, requests map[string]map[string]Request) map[string]quotaUse {
	use := map[string]quotaUse{}
	for _, j := range jobs {
		if api.Terminal(j.state) || len(j.placement.Workers) == 0 {
			continue
		}
		u := use[j.owner]
		for w := range j.placement.Workers {
			u.Request = u.Request.Plus(requests[j.name][w])
		}
		u.Jobs++
		use[j.owner] = u
	}
	return use
}

// jobRequest is the sum of the requests of every worker of a job.
func jobRequest(requests map[string]Request) Request {
	var total Request
	for _, r := range requests {
		total = total.Plus(r)
	}
	return total
}

// overQuota says why a job of user that asks ask may not start while the
// user's placed jobs ask used, under quota q: "over quota of user alice:
// asks 4 cpu, 6 of 8 in use by running jobs"; "" when it may.
func overQuota(user string, q schema.QuotaRecord, used quotaUse, ask Request) string {
	var over []string
	if q.CPU != nil && used.CPU+ask.CPU > *q.CPU+cpuSlack {
		over = append(over, fmt.Sprintf("asks %s cpu, %s of %s in use by running jobs",
			roundCPU(ask.CPU), roundCPU(used.CPU), roundCPU(*q.CPU)))
	}
	if q.Memory != nil && used.Memory+ask.Memory > *q.Memory {
		over = append(over, fmt.Sprintf("asks %s memory, %s of %s in use by running jobs",
			jobspec.FormatMemory(ask.Memory), jobspec.FormatMemory(used.Memory), jobspec.FormatMemory(*q.Memory)))
	}
	if q.GPUs != nil && used.GPUs+ask.GPUs > *q.GPUs {
		over = append(over, fmt.Sprintf("asks %d gpu, %d of %d in use by running jobs", ask.GPUs, used.GPUs, *q.GPUs))
	}
	if q.Jobs != nil && used.Jobs+1 > *q.Jobs {
		over = append(over, fmt.Sprintf("%s of %s jobs running", strconv.Itoa(used.Jobs), strconv.Itoa(*q.Jobs)))
	}
	if len(over) == 0 {
		return ""
	}
	return fmt.Sprintf("over quota of user %s: %s; it starts when the user's running jobs leave room (`gctl quota get %s`)",
		user, strings.Join(over, "; "), user)
}

// roundCPU writes a sum of CPU requests to a hundredth, without the
// float noise of the sum (0.1 + 0.2).
func roundCPU(cpu float64) string { return formatCPU(math.Round(cpu*100) / 100) }

// waitForQuota keeps a job that is not placed yet PENDING while its whole
// request does not fit in its owner's quota: waits is true, and u the
// placement to write when its reason changes (nil when it is written).
func waitForQuota(j clusterJob, quotas map[string]schema.QuotaRecord, used quotaUse, requests map[string]Request, now time.Time) (u *placementUpdate, waits bool) {
	q, ok := quotas[j.owner]
	if !ok || j.owner == "" || len(j.placement.Workers) > 0 {
		return nil, false
	}
	reason := overQuota(j.owner, q, used, jobRequest(requests))
	if reason == "" {
		return nil, false
	}
	if j.placement.Reason == reason {
		return nil, true
	}
	next := j.placement
	next.Reason = reason
	next.Updated = now.UTC()
	return &placementUpdate{job: j.name, fence: j.fence, record: next}, true
}

// addUse is used after a job's placement went from prev to next: the
// requests of the workers placed anew are added, and the job counted once
// it has its first placed worker.
func addUse(used quotaUse, prev, next schema.PlacementRecord, requests map[string]Request) quotaUse {
	for w := range next.Workers {
		if _, ok := prev.Workers[w]; !ok {
			used.Request = used.Request.Plus(requests[w])
		}
	}
	if len(prev.Workers) == 0 && len(next.Workers) > 0 {
		used.Jobs++
	}
	return used
}

// byPriority is jobs with the higher priorities first, in submit order
// within a priority (a stable sort of jobs, which are in submit order).
func byPriority(jobs []clusterJob) []clusterJob {
	out := slices.Clone(jobs)
	slices.SortStableFunc(out, func(a, b clusterJob) int { return cmp.Compare(b.spec.Priority, a.spec.Priority) })
	return out
}
