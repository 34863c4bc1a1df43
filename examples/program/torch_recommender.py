#!/usr/bin/python3
"""A recommender as a gtrain model program through the PyTorch adapter:
one embedding table per id field of the records (gtrainprog_torch.Table, a
torch.nn.EmbeddingBag in mode "sum" whose rows live on gtrain's pservers),
the pooled rows, the dense features and the dot product of each pair of
fields of one dimension (DLRM's interaction) into an MLP (ReLU layers of
model.hidden, default [32]), squared error against the label (model.outputs
1: MovieLens ratings) or softmax cross entropy (outputs > 1). The same
model as the built-in recommender of examples/recommendation/recommendation.yaml
(model.kind recommender, interaction dot: user and movie rows of dimension 5,
the side fields' of 2, so that the one product is user x movie), written in
PyTorch: job examples/recommendation/recommendation_torch.yaml.

Run with Debian's /usr/bin/python3 (python3-torch).
"""

import torch
import torch.nn.functional as F
from torch import nn

import gtrainprog_torch

DIM = 5
SIDE_DIM = 2  # every other field, as in examples/recommendation/recommendation.yaml
MAIN_FIELDS = ("user", "movie")


def dim_of(field):
    return DIM if field in MAIN_FIELDS else SIDE_DIM


class Recommender(nn.Module):
    def __init__(self, inputs, outputs, hidden, id_fields):
        super().__init__()
        self.tables = nn.ModuleList(gtrainprog_torch.Table(f, dim_of(f)) for f in id_fields)
        # the pairs of fields of one dimension, in field order, as the built-in's RecSpec.Pairs
        self.pairs = [(i, j) for i in range(len(self.tables)) for j in range(i + 1, len(self.tables))
                      if self.tables[i].dim == self.tables[j].dim]
        layers, width = [], inputs + sum(t.dim for t in self.tables) + len(self.pairs)
        for h in hidden or [32]:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.mlp = nn.Sequential(*layers, nn.Linear(width, outputs))
        self.outputs = outputs

    def forward(self, x):
        pooled = [t() for t in self.tables]
        dots = [(pooled[i] * pooled[j]).sum(dim=1, keepdim=True) for i, j in self.pairs]
        z = torch.cat(pooled + [x] + dots, dim=1)
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
