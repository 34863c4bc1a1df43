#!/usr/bin/python3
"""Checks the PyTorch adapter's gradient sums against plain autograd's: the
adapter computes nn.Linear weight gradients itself, in bands of rows, after
autograd's pass. Where this OpenBLAS kernel gives a band of rows the bits of
the whole product (Cooperlake, SkylakeX), the sums must be autograd's bit for
bit; where it does not (Haswell, Zen: they sum some values of a band in
another order), within float rounding of them. Either way a second request
must give the same bits. Usage: adapter_bits.py mlp|cnn. Prints one line per
parameter that differs, then "ok" or "differ"."""
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
rng = np.random.RandomState(0)
x, y = rng.rand(32, 784).astype(np.float32), np.arange(32) % 10


def adapter_sums():
    req = gtrainprog.Request({"op": "gradient"})
    req.params, req.tables, req.seed = params, [], 5
    req.x, req.y = x, y
    req.grads = [np.full(p.shape, 7.0, np.float32) for p in params]  # written over
    return [g.copy() for g in m.gradient(req)[0]]


def bands_are_whole():
    """Whether this BLAS gives bands of gt._BAND rows of a weight gradient
    (1024x32 by 32x784) the bits of the whole product."""
    r = np.random.RandomState(1)
    g = torch.from_numpy(r.rand(32, 1024).astype(np.float32))
    a = torch.from_numpy(r.rand(32, 784).astype(np.float32))
    whole, out = torch.mm(g.t(), a), torch.empty(1024, 784)
    for r0 in range(0, 1024, gt._BAND):
        torch.mm(g.t()[r0:r0 + gt._BAND], a, out=out[r0:r0 + gt._BAND])
    return torch.equal(whole, out)


grads, again = adapter_sums(), adapter_sums()
exact = bands_are_whole()
print("this OpenBLAS kernel gives bands the whole product's bits: %s" % exact)

torch.manual_seed(3)
ref = mod.build(784, 10, hidden).float()
for p, v in zip(ref.parameters(), params):
    p.data = torch.from_numpy(v)
torch.manual_seed(5)
F.cross_entropy(ref(torch.from_numpy(x)), torch.from_numpy(y), reduction="none").sum().backward()
bad = 0
for (name, _, _), g, g2, p in zip(decl, grads, again, ref.parameters()):
    want = p.grad.numpy()
    diff = np.abs(g - want).max()
    if not np.array_equal(g, g2):
        bad += 1
        print("%s: a second request gave other bits" % name)
    if exact and not np.array_equal(g, want):
        bad += 1
        print("%s: max difference %g from autograd's" % (name, diff))
    elif not exact and diff > 1e-5 * max(np.abs(want).max(), 1e-30):
        bad += 1
        print("%s: max difference %g from autograd's, past float rounding (largest %g)" % (name, diff, np.abs(want).max()))
print("ok" if bad == 0 else "differ")
