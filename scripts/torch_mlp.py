"""Single-process PyTorch peer of gtrain's trainer_mlp: MLP 784-1024-1024-10,
batch 256, SGD, cross-entropy, float32, on THREADS threads (argv[1], default
1). Prints one JSON line: records/s (the median of 3 windows of 40 steps after
20 of warm-up, as bench/trainermlp.go measures gtrain) and the BLAS that
torch's matmuls loaded, read from this process's memory maps: a peer on
Debian's reference BLAS is 30x slower and no peer at all."""
import json, os, statistics, sys, time
# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
if __name__ == "__main__":
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[1] if len(sys.argv) > 1 else "1"
import torch

from peerblas import blas_loaded


def mlp():
    torch.manual_seed(1)
    return torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10))

def records_per_s(model, per, seed, barrier=lambda: None):
    """Trains model with SGD on batches of per random records; returns the
    global batch of 256 over the median time of 3 windows of 40 steps after
    20 of warm-up (barrier() before each window: DDP's processes start it
    together)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # The mean's gradient, as gtrain's pservers apply it (the sums divided by
    # the records), at the same SGD learning rate: the sum's step is the
    # batch size times larger, another training (on the CNN of
    # torch_program_peer.py, one that computes faster; here the same speed).
    loss_fn = torch.nn.CrossEntropyLoss(reduction="mean")
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(8, per, 784, generator=g), torch.randint(0, 10, (8, per), generator=g)
    def step(i):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x[i % 8]), y[i % 8]).backward()
        opt.step()
    for i in range(20):
        step(i)
    windows = []
    for _ in range(3):
        barrier()
        t0 = time.perf_counter()
        for i in range(40):
            step(i)
        windows.append(40 * 256 / (time.perf_counter() - t0))
    return statistics.median(windows)

def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    torch.set_num_threads(threads)
    print(json.dumps({"records_per_s": records_per_s(mlp(), 256, 0), "threads": torch.get_num_threads(),
                      "blas": blas_loaded(), "torch": torch.__version__}))

if __name__ == "__main__":
    main()
