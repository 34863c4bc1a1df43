package main

import (
	"fmt"

	"github.com/gtrain/gtrain/bench"
)

// measureProgramRoundTrip is program_roundtrip_1m: the ms of a gradient
// round trip of 1 Mi parameters with a do-nothing program through shared
// memory, against copying them in and out (2 × 4 MiB); the pipe's figure
// (protocol version 1) goes in the note.
func measureProgramRoundTrip(t *table, _ sizes) error {
	shm, err := bench.ProgramRoundTripMs(false, 200, 5)
	if err != nil {
		return err
	}
	pipe, err := bench.ProgramRoundTripMs(true, 10, 2)
	if err != nil {
		return err
	}
	memcpy, err := bench.MemcpyMs(200, 5)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "program_roundtrip_1m", Value: shm, Unit: "ms", Ceiling: memcpy,
		Note: fmt.Sprintf("floor, not a ceiling: memcpy of 2 x 4 MiB; a do-nothing Go SDK program (bench/noopprog), 1 Mi parameters, 1 record, the trainer's own buffers in shared memory (zeroed, sent, answered, checked finite); the same over the pipe (protocol version 1): %.1f ms; goal <= 1 ms", pipe)})
	return nil
}

// measurePrograms is program_mlp and program_cnn: records/s of the
// PyTorch programs through the adapter, 1 trainer of cpu: 1, against plain
// single-process PyTorch on 1 thread training the same module. The peer runs
// before and after gtrain and keeps its best: on a shared machine noise only
// ever slows a run, and a peer measured in a quiet moment alone would flatter
// or shame gtrain by chance.
func measurePrograms(t *table, bin string) error {
	models := []bench.ProgramModel{bench.ProgramMLP, bench.ProgramCNN}
	peers := make([]bench.TorchMLP, len(models))
	bestPeers := func() error {
		for i, m := range models {
			p, err := bench.RunTorchProgramPeer("scripts", m, 1)
			if err != nil {
				return err
			}
			if p.RecordsPerS > peers[i].RecordsPerS {
				peers[i] = p
			}
		}
		return nil
	}
	if err := bestPeers(); err != nil {
		return err
	}
	rps, err := bench.ProgramRecordsPerSecond(bin, "examples/program", models)
	if err != nil {
		return err
	}
	if err := bestPeers(); err != nil {
		return err
	}
	for i, m := range models {
		t.add(bench.Result{Name: "program_" + m.Name, Value: rps[i], Unit: "records/s", Ceiling: peers[i].RecordsPerS,
			Note: fmt.Sprintf("peer, not a ceiling: single-process PyTorch %s on %d thread (the best of a run before and one after gtrain's), the same module (examples/program/%s), SGD, batch 256, random data; gtrain: the module as a program through gtrainprog_torch.py (shared memory), 1 trainer of cpu: 1, 2 pservers, Fashion-MNIST, global batch 256, the median of 3 windows of 40 steps after 20; goal ratio >= 0.9",
				peers[i].Torch, peers[i].Threads, m.Entry)})
	}
	return nil
}
