#!/usr/bin/python3
"""A small CNN on Fashion-MNIST as a gtrain model program, through the
PyTorch adapter: conv 5x5 (8) - ReLU - maxpool 2 - conv 5x5 (16) - ReLU -
maxpool 2 - linear to the classes. Records are 784 pixels (28x28); the
module reshapes them. model.hidden (optional) sets the two channel counts.

Run with Debian's /usr/bin/python3 (python3-torch). Everything else —
declaring, seeding, determinism, gradient sums, evaluation, shared memory —
is gtrainprog_torch's.
"""

import torch
import torch.nn.functional as F
from torch import nn

import gtrainprog_torch


def build(inputs, outputs, hidden):
    if inputs != 28 * 28:
        raise ValueError("torch_cnn.py wants 28x28 images (model.inputs: 784), got %d inputs" % inputs)
    c1, c2 = (list(hidden) + [8, 16][len(hidden):])[:2]
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(c2 * 7 * 7, outputs),
    )


def loss(out, y):
    return F.cross_entropy(out, y, reduction="none")


if __name__ == "__main__":
    gtrainprog_torch.serve(build, loss)
