"""gtrainprog: the gtrain model-program protocol for Python (docs/program-protocol.md).

A model program reads requests from stdin and writes answers to stdout. Each
frame is a 4-byte little-endian header length, a JSON header, then raw
little-endian float32 values. Write a class with declare, gradient and
evaluate and call serve(model):

    declare(seed, inputs, outputs, hidden) -> [(name, shape, initial float32 array)]
    gradient(params, x, y) -> (list of gradient-sum arrays, loss_sum)
    evaluate(params, x, y) -> (loss_sum, correct)

params is a list of float32 arrays shaped as declared; x is float32 (n, inputs),
y float32 (n,). Sums over the batch, not means: gtrain weights by record counts.
Raise an exception to fail the job with its message; anything printed to stderr
shows in `gctl job status` when the program fails. Standard library + numpy.
"""

import json
import struct
import sys
import traceback

import numpy as np

VERSION = 1


def _read_exact(stream, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            if not buf:
                return None
            raise EOFError("stdin closed in the middle of a frame")
        buf += chunk
    return bytes(buf)


def read_frame(stream):
    """Returns (header dict, float32 array) or (None, None) at end of input."""
    raw = _read_exact(stream, 4)
    if raw is None:
        return None, None
    (hlen,) = struct.unpack("<I", raw)
    header = json.loads(_read_exact(stream, hlen))
    n = payload_floats(header)
    data = _read_exact(stream, 4 * n) if n else b""
    return header, np.frombuffer(data, dtype="<f4").astype(np.float32)


def payload_floats(req):
    if req["op"] == "declare":
        return 0
    n, inputs = req.get("n", 0), req["inputs"]
    return n * inputs + n + sum(int(np.prod(p["shape"])) for p in req.get("params", []))


def write_frame(stream, header, arrays=()):
    payload = b"".join(np.ascontiguousarray(a, dtype="<f4").tobytes() for a in arrays)
    header = dict(header, floats=len(payload) // 4)
    h = json.dumps(header, allow_nan=False).encode()
    stream.write(struct.pack("<I", len(h)) + h + payload)
    stream.flush()


def _split_batch(req, data):
    n, inputs = req.get("n", 0), req["inputs"]
    x = data[: n * inputs].reshape(n, inputs)
    y = data[n * inputs : n * inputs + n]
    params, off = [], n * inputs + n
    for p in req["params"]:
        size = int(np.prod(p["shape"]))
        params.append(data[off : off + size].reshape(p["shape"]))
        off += size
    return params, x, y


def handle(model, req, data):
    op = req["op"]
    if op == "declare":
        if req.get("version") != VERSION:
            raise ValueError("protocol version %r, this helper speaks %d" % (req.get("version"), VERSION))
        decl = model.declare(req.get("seed", 0), req["inputs"], req.get("outputs", 0), req.get("hidden") or [])
        params = [{"name": name, "shape": list(shape)} for name, shape, _ in decl]
        return {"version": VERSION, "params": params}, [v.reshape(-1) for _, _, v in decl]
    params, x, y = _split_batch(req, data)
    if op == "gradient":
        grads, loss = model.gradient(params, x, y)
        return {"count": len(y), "loss_sum": float(loss)}, [g.reshape(-1) for g in grads]
    if op == "evaluate":
        loss, correct = model.evaluate(params, x, y)
        return {"count": len(y), "loss_sum": float(loss), "correct": int(correct)}, []
    raise ValueError("unknown op %r" % op)


def serve(model, stdin=None, stdout=None):
    """Answers requests until stdin ends. An exception inside the model is
    answered as an error frame (the job fails with its text); the traceback
    also goes to stderr."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    while True:
        req, data = read_frame(stdin)
        if req is None:
            return
        try:
            header, arrays = handle(model, req, data)
        except Exception as e:  # the job's reason shows it
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            write_frame(stdout, {"error": "%s: %s" % (type(e).__name__, e)})
            continue
        write_frame(stdout, header, arrays)
