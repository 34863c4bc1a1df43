// Package cpuaffinity reads and sets which CPUs threads may run on
// (sched_getaffinity, sched_setaffinity), for the agent's exclusive CPUs
// (daemon/supervisor, cpus.go) and a trainer's computing threads.
//
// It owns the system calls and the CPU-list syntax ("0,2,3"; no ranges). It must not
// decide which CPUs a role gets (the supervisor does) nor know what runs on
// a thread.
package cpuaffinity
