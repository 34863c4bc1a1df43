"""What BLAS a PyTorch peer's CPU products run on (scripts/torch_mlp.py,
ddp_mlp.py, torch_program_peer.py and torch_recommender.py report it; bench.PeerAtItsBest refuses a
comparison against a peer on none of OpenBLAS and MKL)."""
import re

import torch


def blas_loaded():
    """The BLAS that torch's CPU products run on. A wheel links MKL into torch
    (BLAS_INFO=mkl): no library of its own to see, and the maps then show
    numpy's and CUDA's BLAS, which torch's CPU products do not use. Debian's
    torch (BLAS_INFO=generic) calls the libblas.so.3 alternative, whose
    mapped files say which (OpenBLAS, or the reference BLAS, 30x slower)."""
    info = re.findall(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    if info and info[0] == "mkl":
        return ["MKL (linked into torch: BLAS_INFO=mkl)"]
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "cublas" not in line.lower()}
    return sorted(libs) or ["BLAS_INFO=" + (info[0] if info else "unknown")]
