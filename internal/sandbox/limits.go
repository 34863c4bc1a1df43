package sandbox

// DefaultPids is the most processes and threads a program may have at
// once: room for an interpreter's thread pools (OpenBLAS, OpenMP, a data
// loader's workers) on a large node, far below what would starve the
// node's pid space (a fork bomb stops here).
const DefaultPids = 512

// cpuPeriod is the CFS period the quota is a share of (the kernel's
// default, 100 ms).
const cpuPeriod = 100_000

// The limits of a program whose role states no request (a job submitted
// on a node that did not isolate programs, which does not refuse it): one
// CPU and 2 GiB, a share of a node such a job cannot exceed unnoticed.
// Submit on an isolating node refuses a program job without
// resources.trainer.memory.
const (
	DefaultCPU         = 1.0
	DefaultMemoryBytes = 2 << 30
)

// Limits are a program's cgroup limits; a zero field sets none.
type Limits struct {
	MemoryBytes int64 // memory.limit_in_bytes / memory.max
	Pids        int   // pids.max
	CPUQuotaUs  int64 // cpu.cfs_quota_us / cpu.max, per CPUPeriodUs
	CPUPeriodUs int64
}

// LimitsFor are the limits of a program whose role asks for cpu CPUs and
// memory bytes (0: not stated, DefaultCPU and DefaultMemoryBytes): the
// request is the limit, the pids limit is DefaultPids.
func LimitsFor(cpu float64, memory int64) Limits {
	if cpu <= 0 {
		cpu = DefaultCPU
	}
	if memory <= 0 {
		memory = DefaultMemoryBytes
	}
	return Limits{MemoryBytes: memory, Pids: DefaultPids, CPUPeriodUs: cpuPeriod,
		CPUQuotaUs: max(int64(cpu*cpuPeriod+0.5), 1000)} // the kernel's minimum quota is 1 ms
}
