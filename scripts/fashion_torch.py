#!/usr/bin/python3
"""PyTorch reference for `make fashion`: the same models, data, normalisation,
batch, optimizer and passes as examples/fashion_mnist_{softmax,mlp}.yaml, with
the usual per-epoch reshuffle of the whole training set. Prints the test
accuracy after each pass and the training records/s of one process.

Needs Debian's python3-torch and python3-numpy: /usr/bin/python3 scripts/fashion_torch.py
"""
import gzip
import os
import sys
import time

# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402
import torch  # noqa: E402

SRC = "/usr/share/datasets/fashion-mnist/"


def idx(name):
    data = gzip.open(SRC + name).read()
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(data[3])]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def load():
    xtr = idx("train-images-idx3-ubyte.gz").reshape(60000, -1).astype(np.float32) / 255
    xte = idx("t10k-images-idx3-ubyte.gz").reshape(10000, -1).astype(np.float32) / 255
    # gctl data convert --normalize: (x - mean) / std of the training set, x - mean where std is 0.
    mean, std = xtr.mean(0, dtype=np.float64), xtr.std(0, dtype=np.float64)
    std[std == 0] = 1
    norm = lambda x: torch.from_numpy(((x - mean) / std).astype(np.float32))
    ytr = torch.from_numpy(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    yte = torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
    return norm(xtr), ytr, norm(xte), yte


def model(kind):
    if kind == "softmax":  # gtrain: weights uniform in [-0.01, 0.01), bias 0
        m = torch.nn.Linear(784, 10)
        torch.nn.init.uniform_(m.weight, -0.01, 0.01)
        torch.nn.init.zeros_(m.bias)
        return m
    m = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    for layer in (m[0], m[2]):  # gtrain: Glorot uniform, bias 0
        torch.nn.init.xavier_uniform_(layer.weight)
        torch.nn.init.zeros_(layer.bias)
    return m


def main(kinds, passes=10, batch=64, lr=0.0005):
    torch.manual_seed(1)
    torch.set_num_threads(1)
    xtr, ytr, xte, yte = load()
    for kind in kinds:
        m = model(kind)
        opt = torch.optim.Adam(m.parameters(), lr=lr)
        accs, trained, busy = [], 0, 0.0
        for _ in range(passes):
            start = time.perf_counter()
            perm = torch.randperm(60000)
            for lo in range(0, 60000, batch):
                i = perm[lo:lo + batch]
                opt.zero_grad()
                torch.nn.functional.cross_entropy(m(xtr[i]), ytr[i]).backward()
                opt.step()
            busy += time.perf_counter() - start
            trained += 60000
            with torch.no_grad():
                accs.append(round(float((m(xte).argmax(1) == yte).float().mean()), 4))
        print(f"torch {kind}: test accuracy per pass {accs}; {trained / busy:.0f} records/s (1 thread)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["softmax", "mlp"])
