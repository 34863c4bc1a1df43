#!/usr/bin/python3
"""PyTorch reference for `make fashion`: the same models, data, normalisation,
batch, optimizer and passes as examples/fashion_mnist_{softmax,mlp}.yaml, with
the usual per-epoch reshuffle of the whole training set. Prints the test
accuracy after each pass and the training records/s of one process.

torch_cnn is examples/program/torch_cnn.py's module, imported from there and
built as the PyTorch adapter (examples/program/gtrainprog_torch.py) builds it
for a trainer: deterministic algorithms, torch.manual_seed(the job's seed)
right before build(inputs, outputs, hidden), float32, so it starts from the
very parameters gtrain declares; the loss is torch_cnn.loss averaged over the
batch (gtrain averages the adapter's gradient sums over the global batch),
and the optimizer, learning rate, momentum, global batch (trainers x
batch_size), passes and seed are read from examples/fashion_mnist_torch_cnn.yaml
(PyYAML: a dependency of Debian's python3-torch). `make fashion` runs it after
the gtrain job and compares the two accuracies.

Needs Debian's python3-torch and python3-numpy: /usr/bin/python3 scripts/fashion_torch.py
[--passes N] [--json FILE] [softmax] [mlp] [torch_cnn] (softmax and mlp when
none is named; --json writes each one's per-pass accuracy and seconds).
"""
import argparse
import gzip
import json
import os
import sys
import time

# Debian's PyTorch leaves OpenBLAS's own threads at every core whatever
# torch.set_num_threads says: the peer must size them before torch loads.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402
import torch  # noqa: E402

SRC = "/usr/share/datasets/fashion-mnist/"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CNN_SPEC = os.path.join(ROOT, "examples", "fashion_mnist_torch_cnn.yaml")


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


def cnn(passes=None):
    """The module, loss, optimizer, global batch and passes of
    examples/fashion_mnist_torch_cnn.yaml, the module seeded and built as the
    adapter builds it (gtrainprog_torch._Model.declare)."""
    import yaml  # Debian's python3-yaml, which python3-torch depends on
    spec = yaml.safe_load(open(CNN_SPEC))
    sys.path.insert(0, os.path.join(os.path.dirname(CNN_SPEC), spec["model"]["workspace"]))
    import gtrainprog_torch  # noqa: E402
    import torch_cnn  # noqa: E402
    mdl, opt = spec["model"], spec["optimizer"]
    if opt["kind"] != "momentum":
        sys.exit("fashion_torch.py: %s has optimizer %s; the reference knows momentum" % (CNN_SPEC, opt["kind"]))
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(spec.get("seed", 1))
    m = torch_cnn.build(mdl["inputs"], mdl["outputs"], mdl.get("hidden") or [])
    gtrainprog_torch._batch_statistics(m)
    m = m.float()
    sgd = torch.optim.SGD(m.parameters(), lr=opt["learning_rate"], momentum=opt.get("momentum", 0.9))
    batch = spec.get("global_batch") or spec["trainers"] * spec["batch_size"]
    return m, sgd, lambda out, y: torch_cnn.loss(out, y).mean(), batch, passes or spec["passes"]


def accuracy(m, x, y, chunk=1000):
    m.eval()
    with torch.no_grad():
        right = sum(int((m(x[lo:lo + chunk]).argmax(1) == y[lo:lo + chunk]).sum()) for lo in range(0, len(y), chunk))
    m.train()
    return round(right / len(y), 4)


def main(kinds, passes=None, out=None, batch=64, lr=0.0005):
    torch.manual_seed(1)
    torch.set_num_threads(1)
    xtr, ytr, xte, yte = load()
    results = {}
    for kind in kinds:
        if kind == "torch_cnn":
            m, opt, loss_fn, batch_k, passes_k = cnn(passes)
        else:
            m = model(kind)
            opt = torch.optim.Adam(m.parameters(), lr=lr)
            loss_fn, batch_k, passes_k = torch.nn.functional.cross_entropy, batch, passes or 10
        accs, trained, busy = [], 0, 0.0
        for _ in range(passes_k):
            start = time.perf_counter()
            perm = torch.randperm(60000)
            for lo in range(0, 60000, batch_k):
                i = perm[lo:lo + batch_k]
                opt.zero_grad()
                loss_fn(m(xtr[i]), ytr[i]).backward()
                opt.step()
            busy += time.perf_counter() - start
            trained += 60000
            # The CNN in chunks (its activations of 10,000 images at once are large).
            accs.append(accuracy(m, xte, yte, 1000 if kind == "torch_cnn" else len(yte)))
        print(f"torch {kind}: test accuracy per pass {accs}; {trained / busy:.0f} records/s (1 thread)", flush=True)
        results[kind] = {"accuracy": accs, "passes": passes_k, "batch": batch_k, "train_seconds": round(busy, 1)}
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kinds", nargs="*", metavar="{softmax,mlp,torch_cnn}", help="the models (default: softmax mlp)")
    ap.add_argument("--passes", type=int, help="passes for every model (default: softmax and mlp 10, torch_cnn its yaml's)")
    ap.add_argument("--json", help="write each model's per-pass test accuracy and training seconds to this file")
    a = ap.parse_args()
    for k in a.kinds:
        if k not in ("softmax", "mlp", "torch_cnn"):
            ap.error("unknown model %r: softmax, mlp or torch_cnn" % k)
    main(a.kinds or ["softmax", "mlp"], a.passes, a.json)
