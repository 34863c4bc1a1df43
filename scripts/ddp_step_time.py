"""PyTorch DDP peer of gtrain's step_time: softmax 784->10, global batch 64
over N processes (gloo, CPU), SGD; prints ms per step (median of 3 windows
of 200 steps after 200 of warm-up), as bench/steptime.go measures gtrain."""
import os, sys, time, statistics
# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def run(rank, world, q):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", "29517"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(1)
    model = DDP(torch.nn.Linear(784, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="mean")  # the mean's step, as gtrain's (torch_mlp.py)
    per = 64 // world
    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(1000, per, 784, generator=g), torch.randint(0, 10, (1000, per), generator=g)
    def step(i):
        opt.zero_grad()
        loss_fn(model(x[i % 1000]), y[i % 1000]).backward()
        opt.step()
    for i in range(200):
        step(i)
    windows = []
    for w in range(3):
        dist.barrier()
        t0 = time.perf_counter()
        for i in range(200):
            step(i)
        windows.append((time.perf_counter() - t0) * 1000 / 200)
    if rank == 0:
        q.put(statistics.median(windows))
    dist.destroy_process_group()

if __name__ == "__main__":
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(run, args=(world, q), nprocs=world, join=True)
    print(f"ddp step_time {world} processes: {q.get():.2f} ms")
