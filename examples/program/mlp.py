#!/usr/bin/python3
"""A 2-layer perceptron (inputs -> hidden ReLU -> outputs) as a gtrain model
program: softmax cross entropy for outputs > 1, squared error for 1 output.
The hidden width is model.hidden[0] of the job spec (default 64).

Deterministic for a seed: the initial values come from numpy's seeded PCG64,
and the arithmetic runs in float64 on one BLAS thread, so the same requests
give bit-identical answers on every run.

--fail-after N: exit with status 3 (and an error on stderr) at the (N+1)-th
gradient request of this process: how the e2e test injects a crash mid-step.
"""

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one summation order
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import gtrainprog  # noqa: E402


class MLP:
    def __init__(self, fail_after=None):
        self.fail_after = fail_after
        self.calls = 0

    def declare(self, seed, inputs, outputs, hidden):
        width = hidden[0] if hidden else 64
        rng = np.random.default_rng(seed)

        def glorot(fan_in, fan_out):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32)

        return [
            ("w0", (inputs, width), glorot(inputs, width)),
            ("b0", (width,), np.zeros(width, np.float32)),
            ("w1", (width, outputs), glorot(width, outputs)),
            ("b1", (outputs,), np.zeros(outputs, np.float32)),
        ]

    def _forward(self, params, x):
        w0, b0, w1, b1 = (p.astype(np.float64) for p in params)
        x = x.astype(np.float64)
        z = x @ w0 + b0
        h = np.maximum(z, 0.0)
        return x, z, h, h @ w1 + b1

    def _loss(self, out, y):
        """Loss sum and d(loss)/d(out), per record."""
        if out.shape[1] == 1:
            diff = out[:, 0] - y
            return 0.5 * float(np.sum(diff * diff)), diff[:, None]
        labels = y.astype(np.int64)
        shifted = out - out.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        rows = np.arange(len(labels))
        delta = np.exp(logp)
        delta[rows, labels] -= 1.0
        return float(-logp[rows, labels].sum()), delta

    def gradient(self, params, x, y):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            print("mlp.py: injected failure at gradient request %d" % self.calls, file=sys.stderr)
            sys.stderr.flush()
            os._exit(3)
        w1 = params[2].astype(np.float64)
        x, z, h, out = self._forward(params, x)
        loss, delta = self._loss(out, y)
        gw1 = h.T @ delta
        gb1 = delta.sum(axis=0)
        dh = (delta @ w1.T) * (z > 0)
        gw0 = x.T @ dh
        gb0 = dh.sum(axis=0)
        return [g.astype(np.float32) for g in (gw0, gb0, gw1, gb1)], loss

    def evaluate(self, params, x, y):
        _, _, _, out = self._forward(params, x)
        loss, _ = self._loss(out, y)
        correct = 0
        if out.shape[1] > 1:
            correct = int((out.argmax(axis=1) == y.astype(np.int64)).sum())
        return loss, correct


def main(argv):
    fail_after = None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--fail-after" and args:
            fail_after = int(args.pop(0))
        else:
            print("mlp.py: unknown argument %r" % a, file=sys.stderr)
            return 2
    gtrainprog.serve(MLP(fail_after))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
