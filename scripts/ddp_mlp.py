"""PyTorch DDP (gloo, CPU) peer of gtrain's scaling_mlp: MLP 784-1024-1024-10,
global batch 256 split over N processes of 1 thread each, SGD; prints one JSON
line with records/s (the median of 3 windows of 40 steps after 20 of warm-up,
as bench/trainermlp.go measures gtrain) and the BLAS torch loaded."""
import json, os, statistics, sys, time
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def run(rank, world, port, q):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(1)
    model = DDP(torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    per = 256 // world
    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(8, per, 784, generator=g), torch.randint(0, 10, (8, per), generator=g)
    def step(i):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x[i % 8]), y[i % 8]).backward()
        opt.step()
    for i in range(20):
        step(i)
    windows = []
    for _ in range(3):
        dist.barrier()
        t0 = time.perf_counter()
        for i in range(40):
            step(i)
        windows.append(40 * 256 / (time.perf_counter() - t0))
    if rank == 0:
        with open("/proc/self/maps") as f:
            blas = sorted({l.split()[-1] for l in f if "blas" in l.lower()})
        q.put({"records_per_s": statistics.median(windows), "processes": world, "blas": blas})
    dist.destroy_process_group()

if __name__ == "__main__":
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    port = 29600 + os.getpid() % 1000
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(run, args=(world, port, q), nprocs=world, join=True)
    print(json.dumps(q.get()))
