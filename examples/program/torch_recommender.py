#!/usr/bin/python3
"""A recommender as a gtrain model program through the PyTorch adapter:
one embedding table per id field of the records (gtrainprog_torch.Table, a
torch.nn.EmbeddingBag in mode "sum" whose rows live on gtrain's pservers),
the pooled rows and the dense features into an MLP (ReLU layers of
model.hidden, default [64]), squared error against the label (model.outputs
1: MovieLens ratings) or softmax cross entropy (outputs > 1). The same
model as the built-in recommender (model.kind recommender), written in
PyTorch: job examples/recommendation_torch.yaml.

Run with Debian's /usr/bin/python3 (python3-torch).
"""

import torch
import torch.nn.functional as F
from torch import nn

import gtrainprog_torch

DIM = 16
DIMS = {"zip": 4}  # a field of its own dimension, as in examples/recommendation.yaml


class Recommender(nn.Module):
    def __init__(self, inputs, outputs, hidden, id_fields):
        super().__init__()
        self.tables = nn.ModuleList(gtrainprog_torch.Table(f, DIMS.get(f, DIM)) for f in id_fields)
        layers, width = [], inputs + sum(t.dim for t in self.tables)
        for h in hidden or [64]:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.mlp = nn.Sequential(*layers, nn.Linear(width, outputs))
        self.outputs = outputs

    def forward(self, x):
        z = torch.cat([x] + [t() for t in self.tables], dim=1)
        out = self.mlp(z)
        return out.squeeze(1) if self.outputs == 1 else out


def build(inputs, outputs, hidden, id_fields):
    return Recommender(inputs, outputs, hidden, id_fields)


def loss(out, y):
    if out.dim() == 1:
        return (out - y) ** 2  # squared error, as the built-in recommender
    return F.cross_entropy(out, y, reduction="none")


if __name__ == "__main__":
    gtrainprog_torch.serve(build, loss)
