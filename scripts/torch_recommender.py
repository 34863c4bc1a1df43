#!/usr/bin/python3
"""PyTorch peer of `make bench`'s recommender group (bench/recommender.go).

The same model as gtrain's built-in recommender (model/recommender.go): per
id field an nn.EmbeddingBag(mode='sum', sparse=True) whose rows start
uniform in +-0.05 as a pserver's do; the pooled vectors side by side, with
interaction "dot" also each pair of same-dimension fields' dot product
(after them, pairs in field order); then a ReLU MLP with Glorot-uniform
weights and zero biases, one output regressing the rating with the mean
squared error. One torch.optim.Adagrad updates all of it (the rows lazily,
from their sparse gradients, as the pservers do). Single process, one
thread (torch.set_num_threads(1), OPENBLAS_NUM_THREADS=1).

Usage: torch_recommender.py CONFIG.json, where the config names the
records the bench exported from the job's own shards (train, test: one
record a line, "label<TAB>field<TAB>field...", a field "id,id" or
"id:weight,id:weight") and the job's settings (fields, dim, dims, hidden,
interaction, lr, eps, batch, passes, seed). The training records are
shuffled each pass with a seeded generator: the same multiset of records
per pass as the job, not its order (the master hands out tasks in an
order of its own).

Prints one JSON line: records_per_s (training records per second of the
passes, each pass timed from its first step to the end of its test
evaluation, as a gtrain job's history times its passes), test_rmse after
the last pass, and what it ran on.
"""
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
from torch import nn  # noqa: E402

sys.dont_write_bytecode = True
from peerblas import blas_loaded  # noqa: E402 (scripts/, this script's directory)


def read_records(path, nfields, vocab):
    """Reads an exported file into labels and, per field, CSR ids (mapped to
    rows through vocab, which grows) and weights (None when all are 1)."""
    labels = []
    flat = [[] for _ in range(nfields)]
    weights = [[] for _ in range(nfields)]
    weighted = [False] * nfields
    offsets = [[0] for _ in range(nfields)]
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            labels.append(float(parts[0]))
            for i in range(nfields):
                cell = parts[1 + i]
                for tok in cell.split(",") if cell else []:
                    idstr, _, w = tok.partition(":")
                    row = vocab[i].setdefault(int(idstr), len(vocab[i]))
                    flat[i].append(row)
                    if w:
                        weighted[i] = True
                        weights[i].append(float(w))
                    else:
                        weights[i].append(1.0)
                offsets[i].append(len(flat[i]))
    fields = []
    for i in range(nfields):
        w = torch.tensor(weights[i], dtype=torch.float32) if weighted[i] else None
        fields.append((torch.tensor(flat[i], dtype=torch.long), torch.tensor(offsets[i], dtype=torch.long), w))
    return torch.tensor(labels, dtype=torch.float32), fields


def gather(field, rs):
    """The entries of records rs of one field, as EmbeddingBag takes them."""
    flat, off, w = field
    starts, lens = off[rs], off[rs + 1] - off[rs]
    boff = torch.zeros(len(rs), dtype=torch.long)
    boff[1:] = lens.cumsum(0)[:-1]
    pos = torch.arange(int(lens.sum())) - boff.repeat_interleave(lens) + starts.repeat_interleave(lens)
    return flat[pos], boff, (w[pos] if w is not None else None)


class Recommender(nn.Module):
    def __init__(self, vocab_sizes, dims, hidden, pairs):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(max(n, 1), d, mode="sum", sparse=True) for n, d in zip(vocab_sizes, dims))
        for b in self.bags:
            nn.init.uniform_(b.weight, -0.05, 0.05)
        self.pairs = pairs
        layers, width = [], sum(dims) + len(pairs)
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, 1))
        for m in layers:
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)
        self.mlp = nn.Sequential(*layers)

    def forward(self, fields, rs):
        pooled = []
        for bag, field in zip(self.bags, fields):
            ids, offs, w = gather(field, rs)
            pooled.append(bag(ids, offs, per_sample_weights=w))
        dots = [(pooled[i] * pooled[j]).sum(1, keepdim=True) for i, j in self.pairs]
        return self.mlp(torch.cat(pooled + dots, 1)).squeeze(1)


def main():
    cfg = json.load(open(sys.argv[1]))
    torch.set_num_threads(1)
    torch.manual_seed(cfg["seed"])
    names = cfg["fields"]
    dims = [cfg.get("dims", {}).get(f, cfg["dim"]) for f in names]
    pairs = []
    if cfg.get("interaction") == "dot":
        pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names)) if dims[i] == dims[j]]
    vocab = [dict() for _ in names]
    ytrain, train = read_records(cfg["train"], len(names), vocab)
    ytest, test = read_records(cfg["test"], len(names), vocab)
    model = Recommender([len(v) for v in vocab], dims, cfg["hidden"], pairs)
    opt = torch.optim.Adagrad(model.parameters(), lr=cfg["lr"], eps=cfg["eps"])
    loss_fn = nn.MSELoss()
    gen = torch.Generator().manual_seed(cfg["seed"])
    n, batch = len(ytrain), cfg["batch"]
    seconds, rmse = 0.0, float("nan")
    for _ in range(cfg["passes"]):
        start = time.perf_counter()
        perm = torch.randperm(n, generator=gen)
        for lo in range(0, n, batch):
            rs = perm[lo:lo + batch]
            opt.zero_grad()
            loss_fn(model(train, rs), ytrain[rs]).backward()
            opt.step()
        with torch.no_grad():
            se = 0.0
            for lo in range(0, len(ytest), 4096):
                rs = torch.arange(lo, min(lo + 4096, len(ytest)))
                se += float(((model(test, rs) - ytest[rs]) ** 2).sum())
            rmse = (se / len(ytest)) ** 0.5
        seconds += time.perf_counter() - start
    print(json.dumps({"records_per_s": n * cfg["passes"] / seconds, "test_rmse": rmse, "threads": torch.get_num_threads(),
                      "blas": blas_loaded(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
