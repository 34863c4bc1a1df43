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
    local scope of what loaded it (torch._C, imported RTLD_LOCAL, and its
    dependencies in load order; libtorch_cpu's own, for a layout where
    that differs). None when no sgemm_ is in reach or dladdr is missing
    (a glibc before 2.34 whose python does not link libdl)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/libtorch" in line}
    torch_libs = [p for name in ("libtorch_cpu.so", "libtorch.so") for p in sorted(paths)
                  if os.path.basename(p).startswith(name)]
    libc = ctypes.CDLL(None)
    try:
        dladdr = libc.dladdr
    except AttributeError:
        return None
    for path in [None, torch._C.__file__] + torch_libs[:1]:
        try:
            fn = ctypes.CDLL(path).sgemm_
        except (AttributeError, OSError):
            continue
        info = _DlInfo()
        if dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
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
    if owner is not None and not os.path.basename(owner).startswith("libtorch"):
        return [owner]
    if info == "open":
        return ["OpenBLAS (linked into torch: BLAS_INFO=open)"]
    return ["BLAS_INFO=%s, sgemm_ %s" % (info, "in " + owner if owner else "not found")]
