"""What BLAS a PyTorch peer's CPU products run on (scripts/torch_mlp.py,
ddp_mlp.py, torch_program_peer.py and torch_recommender.py report it; bench.PeerAtItsBest refuses a
comparison against a peer on none of OpenBLAS and MKL)."""
import ctypes
import os
import re

import torch


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _sgemm_owner():
    """The file whose sgemm_ torch's float32 products call, resolved as the
    dynamic linker binds a library's symbols: the global scope, then the
    library's own dependencies in load order. None when torch's library is
    not found or has no sgemm_ in reach."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/libtorch" in line}
    torch_lib = next((p for name in ("libtorch_cpu.so", "libtorch.so") for p in sorted(paths)
                      if os.path.basename(p).startswith(name)), None)
    if torch_lib is None:
        return None
    libc = ctypes.CDLL(None)
    for scope in (libc, ctypes.CDLL(torch_lib)):
        try:
            fn = scope.sgemm_
        except AttributeError:
            continue
        info = _DlInfo()
        if libc.dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(info.dli_fname.decode())
    return None


def blas_loaded():
    """The BLAS that torch's CPU products run on. A wheel links MKL into torch
    (BLAS_INFO=mkl): no library of its own to see. Debian's torch
    (BLAS_INFO=generic) calls the libblas.so.3 alternative, OpenBLAS's or the
    reference BLAS (30x slower); its liblapack.so.3 alternative may be
    OpenBLAS's all the same, and numpy brings its own: which libraries are
    mapped does not say, so this names the file whose sgemm_ torch calls."""
    info = re.findall(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    info = info[0] if info else "unknown"
    if info == "mkl":
        return ["MKL (linked into torch: BLAS_INFO=mkl)"]
    owner = _sgemm_owner()
    if owner is not None and "/libtorch" not in owner:
        return [owner]
    if info == "open":
        return ["OpenBLAS (linked into torch: BLAS_INFO=open)"]
    return ["BLAS_INFO=%s, sgemm_ %s" % (info, "in " + owner if owner else "not found")]
