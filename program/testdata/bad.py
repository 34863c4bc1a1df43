#!/usr/bin/python3
"""A misbehaving model program for the tests of package program. argv[1]
chooses how it breaks; declare is always answered correctly (a 2x3 "w" and a
3 "b"), unless the mode breaks declare itself."""
import json
import mmap
import os
import signal
import struct
import sys
import time

mode = sys.argv[1]
offer = {}  # the shared-memory descriptors, when offered


def read_exact(n):
    buf = b""
    while len(buf) < n:
        c = sys.stdin.buffer.read(n - len(buf))
        if not c:
            sys.exit(0)
        buf += c
    return buf


def read():
    (n,) = struct.unpack("<I", read_exact(4))
    req = json.loads(read_exact(n))
    if req["op"] == "declare" and req.get("shm"):
        offer.update(req["shm"])
    floats = 0
    if req["op"] != "declare" and "batch" not in req:
        floats = req["n"] * req["inputs"] + req["n"] + sum(p["shape"][0] * (p["shape"][1] if len(p["shape"]) > 1 else 1) for p in req["params"])
    read_exact(4 * floats)
    return req


def write(h, floats=()):
    h = dict(h)
    h.setdefault("floats", len(floats))
    b = json.dumps(h).encode()
    sys.stdout.buffer.write(struct.pack("<I", len(b)) + b + struct.pack("<%df" % len(floats), *floats))
    sys.stdout.buffer.flush()


def declare(req):
    if mode == "declare-exit":
        print("cannot import torch", file=sys.stderr)
        sys.exit(1)
    if mode == "bad-name":
        write({"version": 1, "params": [{"name": "../w", "shape": [2, 3]}]}, [0.0] * 6)
        return
    if mode == "no-gpu" and os.environ.get("CUDA_VISIBLE_DEVICES") != "":
        print("sees GPUs: CUDA_VISIBLE_DEVICES=%r" % os.environ.get("CUDA_VISIBLE_DEVICES"), file=sys.stderr)
        sys.exit(1)
    if mode == "huge":  # one value more than a frame carries: refused before the payload is read
        total = (1 << 29) + 1
        write({"version": 1, "params": [{"name": "w", "shape": [total]}], "floats": total})
        return
    if mode == "nondeterministic":
        write({"version": 1, "params": [{"name": "w", "shape": [2, 3]}, {"name": "b", "shape": [3]}]}, [time.time() % 1] * 9)
        return
    version = 2 if mode.startswith("shm-") and req.get("offer") == 2 else 1
    h = {"version": version, "params": [{"name": "w", "shape": [2, 3]}, {"name": "b", "shape": [3]}]}
    if mode.startswith("shm-ready") and mode != "shm-ready-unaccepted" and req.get("progress"):
        h["progress"] = True
    write(h, [0.5] * 9)
    if mode == "noread":  # stuck after its answer: a deadlock, a blocking call
        print("bad.py: noread, reading no more of stdin", file=sys.stderr, flush=True)
        time.sleep(3600)


while True:
    req = read()
    if req["op"] == "declare":
        declare(req)
        continue
    arrived = time.monotonic()
    n = req["n"]
    print("bad.py: %s on %s of %d records" % (mode, req["op"], n), file=sys.stderr)
    sys.stderr.flush()
    if mode == "exit3":
        sys.exit(3)
    if mode == "killed":  # as the OOM killer does
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(3600)
    if mode == "slow-death":  # stdout closed long before the exit (a GPU context freed, say)
        os.close(1)
        time.sleep(2.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "child-late":  # a forked worker holds stdout; killed 0.7 s before a 2 s timeout
        import subprocess
        subprocess.Popen(["sleep", "30"])
        time.sleep(max(0, 1.3 - (time.monotonic() - arrived)))
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "close-stdout":  # alive, stdout closed: a protocol violation once its time is up
        os.close(1)
        time.sleep(3600)
    if mode == "garbage":
        sys.stdout.buffer.write(b"Traceback (most recent call last):\n")
        sys.stdout.buffer.flush()
        sys.exit(0)
    if mode == "shm-nan-grad":  # a NaN added in place, a clean header
        grads = mmap.mmap(offer["grads_fd"], 36)
        grads[4:8] = struct.pack("<f", float("nan"))
        write({"count": n, "loss_sum": 1.0})
    elif mode in ("shm-ready-twice", "shm-ready-unaccepted"):
        write({"ready": [1]})
        write({"ready": [1]})
        write({"count": n, "loss_sum": 1.0})
    elif mode == "shm-ready-range":
        write({"ready": [7]})
        write({"count": n, "loss_sum": 1.0})
    elif mode == "shm-ready-nan":  # told final with a NaN in it
        grads = mmap.mmap(offer["grads_fd"], 36)
        grads[0:4] = struct.pack("<f", float("inf"))
        write({"ready": [0]})
        write({"count": n, "loss_sum": 1.0})
    elif mode == "wrong-shape":
        write({"count": n, "loss_sum": 1.0}, [0.0] * 8)
    elif mode == "nan-count":
        sys.stdout.buffer.write(b"")
        write({"count": float("nan"), "loss_sum": 1.0}, [0.0] * 9)
    elif mode == "wrong-count":
        write({"count": n + 1, "loss_sum": 1.0}, [0.0] * 9)
    elif mode == "nan-grad":
        write({"count": n, "loss_sum": 1.0}, [float("nan")] + [0.0] * 8)
    elif mode == "error":
        write({"error": "ValueError: labels out of range"})
    else:
        write({"count": n, "loss_sum": 1.0}, [1.0] * 9)
