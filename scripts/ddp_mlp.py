"""PyTorch DDP (gloo, CPU) peer of gtrain's scaling_mlp: MLP 784-1024-1024-10,
global batch 256 split over N processes of 1 thread each, SGD; prints one JSON
line with records/s (the median of 3 windows of 40 steps after 20 of warm-up,
as bench/trainermlp.go measures gtrain) and the BLAS torch loaded."""
import json, os, sys
# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before torch_mlp imports torch
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from peerblas import blas_loaded
from torch_mlp import mlp, records_per_s

def run(rank, world, port, q):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    rps = records_per_s(DDP(mlp()), 256 // world, rank, dist.barrier)
    if rank == 0:
        q.put({"records_per_s": rps, "processes": world, "blas": blas_loaded(), "torch": torch.__version__})
    dist.destroy_process_group()

if __name__ == "__main__":
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    port = 29600 + os.getpid() % 1000
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(run, args=(world, port, q), nprocs=world, join=True)
    print(json.dumps(q.get()))
