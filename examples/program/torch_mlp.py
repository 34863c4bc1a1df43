#!/usr/bin/python3
"""A multi-layer perceptron as a gtrain model program through the PyTorch
adapter: Linear-ReLU for every width of model.hidden (default [128]), then
a Linear to model.outputs, softmax cross entropy. The program_mlp benchmark
runs it as 784-1024-1024-10.

Run with Debian's /usr/bin/python3 (python3-torch).
"""

import torch.nn.functional as F
from torch import nn

import gtrainprog_torch


def build(inputs, outputs, hidden):
    layers, width = [], inputs
    for h in hidden or [128]:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, outputs))


def loss(out, y):
    return F.cross_entropy(out, y, reduction="none")


if __name__ == "__main__":
    gtrainprog_torch.serve(build, loss)
