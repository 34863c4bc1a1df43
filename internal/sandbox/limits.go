package sandbox

// DefaultPids is the most processes and threads a program may have at
// once: room for an interpreter's thread pools (OpenBLAS, OpenMP, a data
// loader's workers) on a large node, far below what would starve the
// node's pid space (a fork bomb stops here).
const DefaultPids = 512

// cpuPeriod is the CFS period the quota is a share of (the kernel's
// default, 100 ms).
const cpuPeriod = 100_000

// Limits are a program's cgroup limits; a zero field sets none.
type Limits struct {
	MemoryBytes int64 // memory.limit_in_bytes / memory.max
	Pids        int   // pids.max
	CPUQuotaUs  int64 // cpu.cfs_quota_us / cpu.max, per CPUPeriodUs
	CPUPeriodUs int64
}

// LimitsFor are the limits of a program whose role asks for cpu CPUs and
// memory bytes (0: not stated, no limit): the request is the limit, the
// pids limit is DefaultPids.
func LimitsFor(cpu float64, memory int64) Limits {
	l := Limits{MemoryBytes: max(memory, 0), Pids: DefaultPids}
	if cpu > 0 {
		l.CPUPeriodUs = cpuPeriod
		l.CPUQuotaUs = max(int64(cpu*cpuPeriod+0.5), 1000) // the kernel's minimum quota is 1 ms
	}
	return l
}
