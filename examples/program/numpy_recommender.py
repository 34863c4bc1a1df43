#!/usr/bin/python3
"""A small recommender in numpy as a gtrain model program: an embedding
table per id field of the records (rows on gtrain's pservers, declared with
gtrainprog's tables), each record's rows pooled by weighted sum, the pooled
vectors and the dense features into a linear layer, squared error against
the label (model.outputs 1, e.g. MovieLens ratings). What a numpy program
with tables looks like; e2e.TestProgramRecommender trains it.

Run with Debian's /usr/bin/python3 (python3-numpy).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # bit-identical sums on every trainer

import numpy as np  # noqa: E402

import gtrainprog  # noqa: E402

DIM = 8
DIMS = {"zip": 4}


class Recommender:
    def tables(self, id_fields):
        self.dims = [DIMS.get(f, DIM) for f in id_fields]
        return [(f, d) for f, d in zip(id_fields, self.dims)]

    def declare(self, seed, inputs, outputs, hidden):
        if outputs != 1:
            raise ValueError("numpy_recommender regresses one label: model.outputs must be 1, got %d" % outputs)
        self.inputs = inputs
        width = inputs + sum(self.dims)  # tables() came first
        return [("w", (width,), np.full(width, 0.1, np.float32)), ("b", (1,), np.zeros(1, np.float32))]

    def _forward(self, params, x, tables):
        w, b = params
        pooled = [self._pool(t, len(x)) for t in tables]
        z = np.concatenate([x] + pooled, axis=1)
        return z, z @ w + b[0]

    @staticmethod
    def _pool(t, n):
        rec = np.repeat(np.arange(n), np.diff(t.offsets))
        pooled = np.zeros((n, t.dim), np.float32)
        np.add.at(pooled, rec, t.weights[:, None] * t.rows[t.index])
        return pooled

    def gradient(self, params, x, y, tables):
        w, _ = params
        z, pred = self._forward(params, x, tables)
        d = (2 * (pred - y)).astype(np.float32)
        row_grads, col = [], self.inputs
        for t in tables:
            rec = np.repeat(np.arange(len(x)), np.diff(t.offsets))
            dpooled = d[:, None] * w[col : col + t.dim][None, :]
            g = np.zeros(t.rows.shape, np.float32)
            np.add.at(g, t.index, t.weights[:, None] * dpooled[rec])
            row_grads.append(g)
            col += t.dim
        return [z.T @ d, np.array([d.sum()], np.float32)], float(((pred - y) ** 2).sum()), row_grads

    def evaluate(self, params, x, y, tables):
        _, pred = self._forward(params, x, tables)
        return float(((pred - y) ** 2).sum()), 0


if __name__ == "__main__":
    gtrainprog.serve(Recommender())
