package main

import (
	"fmt"
	"strings"

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
// single-process PyTorch on 1 thread training the same module. Each side
// runs twice, alternated, and keeps its best: on a shared machine noise only
// ever slows a run, and this PyTorch's CNN itself runs at one of two speeds
// a process (24-26 or 31-40 ms a step here, the same script, whatever the
// CPU it is pinned to), so one run of a side against the best of the other
// would measure the draw.
func measurePrograms(t *table, bin string) error {
	models := []bench.ProgramModel{bench.ProgramMLP, bench.ProgramCNN}
	peers := make([]bench.TorchMLP, len(models))
	rps := make([]float64, len(models))
	for round := range 2 {
		for i, m := range models {
			p, err := bench.RunTorchProgramPeer("scripts", m, 1)
			if err != nil {
				return err
			}
			peers[i] = bestPeer(round, peers[i], p)
		}
		got, err := bench.ProgramRecordsPerSecond(bin, "examples/program", models)
		if err != nil {
			return err
		}
		for i, r := range got {
			rps[i] = max(rps[i], r)
		}
	}
	for i, m := range models {
		if !bench.PeerAtItsBest(peers[i].BLAS) {
			t.notMeasured("program_"+m.Name, slowPeer(peers[i].BLAS).missing())
			continue
		}
		t.add(bench.Result{Name: "program_" + m.Name, Value: rps[i], Unit: "records/s", Ceiling: peers[i].RecordsPerS,
			Note: fmt.Sprintf("peer, not a ceiling: single-process PyTorch %s on %d thread, BLAS %s (the best of 2 runs), the same module (examples/program/%s), SGD on the mean loss (the step gtrain takes), batch 256, random data; gtrain: the module as a program through gtrainprog_torch.py (shared memory), 1 trainer of cpu: 1, 2 pservers, Fashion-MNIST, global batch 256, the median of 3 windows of 40 steps after 20, the best of 2 runs alternated with the peer's; the peer's glibc malloc keeps freed memory as the adapter's does (bench.PeerEnv); %s; goal ratio >= 0.9",
				peers[i].Torch, peers[i].Threads, strings.Join(peers[i].BLAS, " "), m.Entry, bench.SameKernels()+" (when that PyTorch runs on OpenBLAS; the program and the peer run the same one)")})
	}
	return nil
}
