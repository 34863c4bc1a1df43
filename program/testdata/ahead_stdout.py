#!/usr/bin/python3
"""Accepts requests sent ahead, then answers its first gradient request with
text on stdout, half a second late (a print() where frames go), and exits:
the request queued behind it must fail with the same error, the text
quoted whole."""
import json
import struct
import sys
import time


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = sys.stdin.buffer.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def write(h, payload=b""):
    h = dict(h)
    h.setdefault("floats", 0)
    b = json.dumps(h).encode()
    sys.stdout.buffer.write(struct.pack("<I", len(b)) + b + payload)
    sys.stdout.buffer.flush()


while True:
    (n,) = struct.unpack("<I", read_exact(4))
    req = json.loads(read_exact(n))
    if req["op"] == "declare":
        params = [{"name": "w", "shape": [2, 3]}, {"name": "b", "shape": [3]}]
        write({"version": 2, "params": params, "progress": True, "overwrite": True, "ahead": True, "floats": 9}, struct.pack("<9f", *([0.5] * 9)))
        continue
    time.sleep(0.5)
    sys.stdout.buffer.write(b"hello from print()\n" * 2000)
    sys.stdout.buffer.flush()
    time.sleep(1)
    sys.exit(0)
