#!/usr/bin/python3
"""A model program with embedding tables for the tests of package program,
on examples/program/gtrainprog.py. argv[1] chooses what it declares or
how it breaks:

  ok          tables "user" (dim 3) and "movie" (dim 4, adagrad); row
              gradients that show what arrived: column 0 the weights of the
              row's entries, column 1 the row's id mod 1000, column 2 twice
              the row's value there; b's gradient counts the entries
  no-field    a table "nosuch"
  twice       "user" twice
  short       a gradient answer one row-gradient float short
  nan         a NaN row gradient
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))
import gtrainprog  # noqa: E402

mode = sys.argv[1]
TABLES = {
    "ok": [("user", 3), ("movie", 4, "adagrad")],
    "no-field": [("nosuch", 3)],
    "twice": [("user", 3), ("user", 3)],
}.get(mode, [("user", 3), ("movie", 4, "adagrad")])


class Model:
    def declare(self, seed, inputs, outputs, hidden):
        return [("b", (1,), np.zeros(1, np.float32))]

    def tables(self, id_fields):
        return TABLES

    def gradient(self, params, x, y, tables):
        row_grads, entries = [], 0
        for t in tables:
            g = np.zeros(t.rows.shape, np.float32)
            np.add.at(g[:, 0], t.index, t.weights)
            g[:, 1] += (t.ids % 1000).astype(np.float32)
            g[:, 2] += 2 * t.rows[:, 2]
            entries += int(t.offsets[-1] - t.offsets[0])
            row_grads.append(g)
        if mode == "nan":
            row_grads[0][0, 0] = np.nan
        if mode == "short":
            row_grads[-1] = row_grads[-1].reshape(-1)[:-1]
        return [np.array([entries], np.float32)], 0.0, row_grads

    def evaluate(self, params, x, y, tables):
        loss = 0.0
        for t in tables:
            loss += float(np.dot(t.weights, t.rows[t.index].sum(axis=1)))
        return loss, 0


if __name__ == "__main__":
    if mode == "short":  # past the helper's own check of the shapes
        gtrainprog.answer_gradient = lambda ch, req, grads, loss, row_grads: ch.answer(
            {"count": len(req.y), "loss_sum": float(loss)},
            ([] if req.grads is not None else [g.reshape(-1) for g in grads]) + [g.reshape(-1) for g in row_grads],
        )
    gtrainprog.serve(Model())
