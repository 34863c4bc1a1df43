#!/usr/bin/python3
"""A module with dropout and BatchNorm for the adapter's tests: dropout
must follow the request's seed, BatchNorm must run on batch statistics."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import gtrainprog_torch  # noqa: E402


def build(inputs, outputs, hidden):
    return nn.Sequential(nn.Linear(inputs, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, outputs))


gtrainprog_torch.serve(build, lambda out, y: F.cross_entropy(out, y, reduction="none"))
