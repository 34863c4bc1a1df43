#!/usr/bin/python3
"""Checks that the PyTorch adapter's gradient sums are plain autograd's, bit
for bit: the adapter computes nn.Linear weight gradients itself, in bands of
rows, after autograd's pass. Usage: adapter_bits.py mlp|cnn. Prints one
line per parameter that differs, then "ok" or "differ"."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import gtrainprog  # noqa: E402
import gtrainprog_torch as gt  # noqa: E402
import torch_cnn  # noqa: E402
import torch_mlp  # noqa: E402

mod, hidden = (torch_mlp, [1024, 300]) if sys.argv[1] == "mlp" else (torch_cnn, [])
m = gt._Model(mod.build, mod.loss)
decl = m.declare({"seed": 3, "inputs": 784, "outputs": 10, "hidden": hidden, "threads": 1})
params = [v.copy() for _, _, v in decl]
req = gtrainprog.Request({"op": "gradient"})
req.params, req.tables, req.seed = params, [], 5
rng = np.random.RandomState(0)
req.x, req.y = rng.rand(32, 784).astype(np.float32), np.arange(32) % 10
req.grads = [np.full(p.shape, 7.0, np.float32) for p in params]  # written over
grads, loss, _ = m.gradient(req)

torch.manual_seed(3)
ref = mod.build(784, 10, hidden).float()
for p, v in zip(ref.parameters(), params):
    p.data = torch.from_numpy(v)
torch.manual_seed(5)
F.cross_entropy(ref(torch.from_numpy(req.x)), torch.from_numpy(req.y), reduction="none").sum().backward()
bad = 0
for (name, _, _), g, p in zip(decl, grads, ref.parameters()):
    if not np.array_equal(g, p.grad.numpy()):
        bad += 1
        print("%s: max difference %g" % (name, np.abs(g - p.grad.numpy()).max()))
print("ok" if bad == 0 else "differ")
