"""Single-process PyTorch peer of gtrain's program_mlp and program_cnn:
the module of examples/program/torch_mlp.py (784-1024-1024-10) or
torch_cnn.py, trained with plain PyTorch (SGD, cross entropy, float32,
batch 256) on THREADS threads. Usage: torch_program_peer.py mlp|cnn THREADS.
Prints one JSON line: records/s, the median of 3 windows of 40 steps after
20 of warm-up (as bench/programjob.go measures gtrain)."""
import json
import os
import statistics
import sys
import time

# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[2] if len(sys.argv) > 2 else "1"
import torch  # noqa: E402
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ left in examples/program
from peerblas import blas_loaded  # noqa: E402 (scripts/, this script's directory)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "program"))
import torch_cnn  # noqa: E402
import torch_mlp  # noqa: E402

BATCH = 256


def main():
    which, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    if which == "mlp":
        model = torch_mlp.build(784, 10, [1024, 1024])
    else:
        model = torch_cnn.build(784, 10, [])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.rand(8, BATCH, 784), torch.randint(0, 10, (8, BATCH))

    # The mean's gradient, as gtrain's pservers apply it (the sums divided by
    # the records), at the same SGD learning rate: the sum's step is the
    # batch size times larger, another training, and on the CNN the
    # parameters it leads to computed 6-10 ms a step faster (26-33 against
    # 33-43 ms, one process, the two interleaved): not a better peer.
    def step(i):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x[i % 8]), y[i % 8], reduction="mean").backward()
        opt.step()

    for i in range(20):
        step(i)
    windows = []
    for _ in range(3):
        t0 = time.perf_counter()
        for i in range(40):
            step(i)
        windows.append(40 * BATCH / (time.perf_counter() - t0))
    print(json.dumps({"records_per_s": statistics.median(windows), "threads": torch.get_num_threads(),
                      "blas": blas_loaded(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
