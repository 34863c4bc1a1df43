#!/usr/bin/env bash
# Scaling curves of the compute issue: records/s of gtrain training MLP
# 784-1024-1024-10 (global batch 256) with 1, 2, 4, 8 and 16 trainers of
# cpu: 1 and half as many pservers (at least 2: each pserver serves every
# trainer its shard), against PyTorch DDP over gloo with as many processes of
# one thread (scripts/ddp_mlp.py, Debian's python3-torch on OpenBLAS).
# Meant for a machine with at least as many cores as the largest count;
# needs Debian's dataset-fashion-mnist, and python3-torch for the DDP curve
# (GTRAIN_PEER_PYTHON=/path/to/python3 names another python3 with PyTorch,
# e.g. a virtual environment's on a machine without Debian's; the script
# prints which BLAS that PyTorch runs on).
#   scripts/scaling.sh [COUNTS]      e.g. scripts/scaling.sh 1,2,4
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory build
tags=
if pkg-config --exists openblas 2>/dev/null; then tags=-tags=openblas; fi
GOEXPERIMENT=simd go run $tags ./bench/cmd -scaling "${1:-1,2,4,8,16}"
