package jobspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MasterName is the worker name of a job's master.
const MasterName = "master"

// PserverName is the worker name of pserver i ("pserver-0").
func PserverName(i int) string { return "pserver-" + strconv.Itoa(i) }

// TrainerName is the worker name of trainer i ("trainer-0").
func TrainerName(i int) string { return "trainer-" + strconv.Itoa(i) }

// Roles of the worker names.
const (
	RoleMaster  = "master"
	RolePserver = "pserver"
	RoleTrainer = "trainer"
)

// ErrUnknownWorker is a worker name that is not master, pserver-N or trainer-N.
var ErrUnknownWorker = errors.New("unknown worker")

// ParseWorker splits a worker name ("master", "pserver-1", "trainer-0") into
// its role and index (-1 for the master). Only the names Workers produces
// parse: no sign, no leading zero.
func ParseWorker(worker string) (role string, index int, err error) {
	if worker == MasterName {
		return RoleMaster, -1, nil
	}
	for _, r := range []string{RolePserver, RoleTrainer} {
		rest, ok := strings.CutPrefix(worker, r+"-")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 || strconv.Itoa(i) != rest {
			break
		}
		return r, i, nil
	}
	return "", 0, fmt.Errorf("%w %q: want master, pserver-N or trainer-N", ErrUnknownWorker, worker)
}

// Workers lists the role processes of the job, in start order: the master,
// then pserver-0..P-1, then trainer-0..T-1. These are the names users pass to
// `gctl job logs -w`.
func (s *Spec) Workers() []string {
	names := make([]string, 0, 1+max(s.Pservers, 0)+max(s.Trainers, 0))
	names = append(names, MasterName)
	for i := 0; i < s.Pservers; i++ {
		names = append(names, PserverName(i))
	}
	for i := 0; i < s.Trainers; i++ {
		names = append(names, TrainerName(i))
	}
	return names
}
