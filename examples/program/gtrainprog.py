"""gtrainprog: the gtrain model-program protocol for Python (docs/program-protocol.md).

A model program reads requests from stdin and writes answers to stdout (so
print diagnostics to stderr: stdout carries frames only). Each frame is a
4-byte little-endian header length, a JSON header, then raw little-endian
float32 values. Write a class with declare, gradient and evaluate and call
serve(model):

    declare(seed, inputs, outputs, hidden) -> [(name, shape, initial float32 array)]
    gradient(params, x, y) -> (list of gradient-sum arrays, loss_sum)
    evaluate(params, x, y) -> (loss_sum, correct)

params is a list of float32 arrays shaped as declared (read-only: they are
gtrain's); x is float32 (n, inputs); y is int64 class indices for a
classifier (outputs > 1), float32 targets otherwise. Sums over the batch, not
means: gtrain weights by record counts. gradient returns one array per
declared parameter, in order, each with the parameter's number of values:
another count or size is answered as an error naming it (the job fails),
through the pipe and shared memory alike. Raise an exception to fail the
job with its message. Standard library + numpy.

Step and seed: a gradient or evaluate with a keyword parameter named step
or seed (gradient(params, x, y, step=0, seed=0)) gets the request's step
number and seed (for dropout or augmentation: the same for a micro-batch
whichever trainer computes it). Only gradient requests in shared memory
(protocol version 2) carry them: through the pipe (version 1, also where
the trainer cannot create shared memory) both are 0 on every request, and
the helper says so once on stderr; evaluate's are always 0.

Embedding tables (docs/program-protocol.md, "Embedding tables"): a model
with a method tables(id_fields) -> [(name, dim) or (name, dim, optimizer)]
(called before declare) declares tables named after the records' id fields; their rows live on
gtrain's pservers. Each batch request then has req.tables, one Rows per
table (ids, offsets, index, weights, rows: the batch's distinct rows), and
the model's gradient and evaluate get it as a fourth argument:

    gradient(params, x, y, tables) -> (grads, loss_sum, row_grads)
    evaluate(params, x, y, tables) -> (loss_sum, correct)

row_grads holds one (rows, dim) float32 array per table: the gradient sum
of each distinct row. Rows travel in the pipe at both versions.

When the trainer offers shared memory (protocol version 2), the helper takes
it: parameters and records are read in place from memory the trainer wrote,
and the gradients are added in place into memory the trainer reads, so only
small JSON headers cross the pipe. Programs need not change for it; the
PyTorch adapter (gtrainprog_torch.py) builds on Channel below.
"""

import ctypes
import fcntl
import functools
import inspect
import json
import mmap
import struct
import sys
import traceback

import numpy as np

VERSION = 1  # the pipe protocol: every program speaks it
VERSION_SHM = 2  # shared memory, offered by the trainer in declare


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
    return header, np.frombuffer(data, dtype="<f4")


def payload_floats(req):
    if req["op"] == "declare":
        return 0
    n, inputs = req.get("n", 0), req["inputs"]
    rows = sum(_table_words(t, n) for t in req.get("tables") or [])
    if "batch" in req:
        return rows
    return n * inputs + n + sum(_size(p) for p in req.get("params", [])) + rows


def _table_words(t, n):
    """4-byte words of a table's part of a request: ids (2 each), offsets,
    index, weights, rows."""
    return 2 * t["rows"] + n + 1 + 2 * t["entries"] + t["rows"] * t["dim"]


class Rows:
    """One table's part of a batch: ids (uint64, one per distinct row),
    offsets (int32, n+1: record r's entries are offsets[r]:offsets[r+1]),
    index (int32, the distinct row of each entry), weights (float32, each
    entry's) and rows (float32 (len(ids), dim), read-only: the rows'
    current values). The model answers one gradient sum per distinct row."""

    def __init__(self, header, words, n):
        self.name, self.dim = header["name"], header["dim"]
        u, e = header["rows"], header["entries"]
        parts, off = [], 0
        for size in (2 * u, n + 1, e, e, u * self.dim):
            parts.append(words[off : off + size])
            off += size
        self.ids = parts[0].view("<u8")
        self.offsets = parts[1].view("<i4")
        self.index = parts[2].view("<i4")
        self.weights = parts[3]
        self.rows = parts[4].reshape(u, self.dim)


def _tables(h, words):
    out, off, n = [], 0, h.get("n", 0)
    for t in h.get("tables") or []:
        size = _table_words(t, n)
        out.append(Rows(t, words[off : off + size], n))
        off += size
    return out


def _size(tensor):
    return int(np.prod(tensor["shape"]))


def write_frame(stream, header, arrays=()):
    payload = b"".join(np.ascontiguousarray(a, dtype="<f4").tobytes() for a in arrays)
    header = dict(header, floats=len(payload) // 4)
    h = json.dumps(header, allow_nan=False).encode()
    stream.write(struct.pack("<I", len(h)) + h + payload)
    stream.flush()


class Stopped(Exception):
    """The trainer stopped a gradient request sent ahead before its
    parameters were all back (they will not come): answer it with
    Channel.stopped, having written no gradient."""


class Request:
    """One request. op is "declare", "gradient" or "evaluate"; header is the
    JSON header. A batch request has params (read-only arrays shaped as
    declared), x, y, step and seed (for dropout or augmentation: the same
    for a micro-batch whichever trainer computes it; only a gradient
    request in shared memory carries them, seeded says so: through the
    pipe, protocol version 1, and in evaluate both are 0), and grads: arrays
    holding zeros to add the gradient sums into (shared memory; once the
    program accepted overwrite at declare, they hold anything and the
    program writes the sums over it), or None (the pipe: the sums go back
    in the answer)."""

    def __init__(self, header):
        self.header = header
        self.op = header["op"]
        self.step = header.get("step", 0)
        self.seed = header.get("seed", 0)
        # Whether the request could carry step and seed: version 2 (shared
        # memory). Through the pipe (version 1) they are 0 on every request.
        self.seeded = "batch" in header
        self.params = self.x = self.y = self.grads = None
        self.tables = []  # one Rows per declared table
        self._tell = None  # progress frames: see ready()
        self.ahead = False  # sent before its parameters are all back: see await_params
        self._frames, self._arrived, self._go = None, set(), False

    def await_params(self, indices):
        """Returns once the parameters at indices (declared order) hold the
        request's values. A gradient request sent ahead (req.ahead, once the
        program accepted it at declare) goes out while the pservers' answers
        to the last push are on their way: the trainer tells each parameter
        as it lands in the shared parameters, and the program must not read
        one before. Raises Stopped when the trainer stops the request: the
        parameters will not come. A no-op for any other request."""
        while self.ahead and not self._go and not self._arrived.issuperset(indices):
            self._next_frame()

    def await_go(self):
        """Returns once every parameter holds the request's values and the
        gradients may be written (the last push has read them all); raises
        Stopped instead when the trainer stops the request. Call it before
        writing any gradient of a request sent ahead; a no-op otherwise."""
        while self.ahead and not self._go:
            self._next_frame()

    def _next_frame(self):
        h = self._frames()
        if h is None:
            raise EOFError("stdin closed in the middle of a request sent ahead")
        op = h.get("op")
        if op == "arrived":
            self._arrived.update(h.get("arrived") or [])
        elif op == "go":
            self._go = True
        elif op == "stop":
            raise Stopped()
        else:
            raise ValueError("a %r frame in a gradient request sent ahead" % op)

    def ready(self, *indices):
        """Tells gtrain, during a gradient request in shared memory, that
        the gradient sums of the parameters at indices (declared order) are
        final in grads: they are sent to the pservers while the rest
        computes. A no-op unless the program accepted progress at declare
        (Channel.declare_answer(..., progress=True)); each parameter at most
        once per request, and never written again in it."""
        if self._tell is not None and indices:
            self._tell({"ready": [int(i) for i in indices]})

    def partial(self, index, n):
        """Tells gtrain, during a gradient request in shared memory, that
        the first n gradient sums of the parameter at index (flat, in its
        row-major layout) are final in grads, before the whole parameter is
        (ready): the trainer pushes that part while the rest computes. n
        grows from call to call. A no-op unless the program accepted
        progress at declare."""
        if self._tell is not None:
            self._tell({"partial": [[int(index), int(n)]]})

    def release(self, *indices):
        """Tells gtrain, during a gradient request in shared memory, that the
        program reads the parameters at indices no more in this request
        (its backward pass is past them): the trainer may write the next
        step's values there before the answer. A no-op unless the program
        accepted progress at declare; each parameter at most once per
        request."""
        if self._tell is not None and indices:
            self._tell({"released": [int(i) for i in indices]})


# glibc's malloc options (malloc.h): what it keeps of freed memory.
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


def keep_freed_memory():
    """Makes glibc's malloc keep the memory a request freed for the next one.

    By default a block over 128 KiB is mmapped and returned to the kernel
    when freed, the threshold moving with the program's history: a
    framework allocating its activations afresh each request then
    page-faults them back every time. Measured with PyTorch on this 2-core
    VM: the MLP 784-1024-1024-10 ran 6,400-6,800 records/s a process
    without this and 9,000-9,500 with it; the CNN of torch_cnn.py 25 to 125
    ms a step, one process to the next, against 24-31 with it. Blocks up to
    32 MiB come from the heap, which keeps up to 128 MiB free at its top.
    The benchmarks' PyTorch peers get the same settings (MALLOC_*_
    variables). Does nothing where libc is not glibc."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(o, v) == 1 for o, v in ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 128 << 20), (_M_TOP_PAD, 16 << 20)))


class Channel:
    """The program's end of the protocol: requests() yields Requests,
    answer() and fail() reply. It accepts shared memory when offered."""

    def __init__(self, stdin=None, stdout=None):
        keep_freed_memory()
        self.stdin = stdin or sys.stdin.buffer
        self.stdout = stdout or sys.stdout.buffer
        self.shm = None  # the offer: {"params_fd": 3, ...}
        self.progress_offered = self.progress = False
        self.overwrite_offered = self.overwrite = False
        self.ahead_offered = self.ahead = False
        self.classes = 0
        self._params = self._grads = self._records = None

    def requests(self):
        while True:
            header, data = read_frame(self.stdin)
            if header is None:
                return
            try:
                req = self._request(header, data)
            except Exception as e:  # a declare of another version
                self.fail(e)
                continue
            yield req

    def _request(self, header, data):
        req = Request(header)
        if req.op == "declare":
            if header.get("version") != VERSION:
                raise ValueError("protocol version %r, this helper speaks %d" % (header.get("version"), VERSION))
            self.classes = header.get("outputs", 0) if header.get("outputs", 0) > 1 else 0
            if header.get("offer", 0) >= VERSION_SHM and header.get("shm") and _inherited(header["shm"]):
                self.shm = header["shm"]
                self.progress_offered = bool(header.get("progress"))
                self.overwrite_offered = bool(header.get("overwrite"))
                self.ahead_offered = bool(header.get("ahead"))
        elif "batch" in header:
            self._shared_batch(req, header, data)
        else:
            self._pipe_batch(req, header, data)
        return req

    def declare_answer(self, params, tables=(), progress=False, overwrite=False, ahead=False):
        """The header of a declare answer for [(name, shape)] and the
        embedding tables [(name, dim) or (name, dim, optimizer)]; progress
        accepts progress frames when offered (Request.ready); overwrite
        accepts, when offered, a grads file that is not cleared before each
        gradient request: the program then writes every value of it (zeros
        where the loss does not depend on a parameter) instead of adding;
        ahead (with both) accepts gradient requests sent before their
        parameters are all back (Request.await_params)."""
        version = VERSION_SHM if self.shm else VERSION
        h = {"version": version, "params": [{"name": n, "shape": list(s)} for n, s in params]}
        if progress and self.progress_offered:
            h["progress"] = self.progress = True
        if overwrite and self.overwrite_offered:
            h["overwrite"] = self.overwrite = True
        if ahead and self.ahead_offered and self.progress and self.overwrite:
            h["ahead"] = self.ahead = True
        if tables:
            h["tables"] = [_table_header(*t) for t in tables]
        return h

    def _pipe_batch(self, req, h, data):
        n, inputs = h.get("n", 0), h["inputs"]
        req.x = data[: n * inputs].reshape(n, inputs)
        y = data[n * inputs : n * inputs + n]
        req.y = y.astype(np.int64) if self.classes else y
        dense = n * inputs + n + sum(_size(p) for p in h["params"])
        req.params = _split(data[n * inputs + n : dense], h["params"])
        req.tables = _tables(h, data[dense:])

    def _shared_batch(self, req, h, data):
        if self._params is None:  # the parameter files never move: map once
            total = sum(_size(p) for p in h["params"])
            self._params = _map(self.shm["params_fd"], total * 4, mmap.PROT_READ)
            self._grads = _map(self.shm["grads_fd"], total * 4, mmap.PROT_READ | mmap.PROT_WRITE)
            self._pviews = _split(np.frombuffer(self._params, dtype="<f4"), h["params"])
            self._gviews = _split(np.frombuffer(self._grads, dtype="<f4"), h["params"])
        b = h["batch"]
        if self._records is None or len(self._records) < b["records_size"]:
            self._records = _map(self.shm["records_fd"], b["records_size"], mmap.PROT_READ)
        n, inputs = h.get("n", 0), h["inputs"]
        req.x = np.frombuffer(self._records, dtype="<f4", count=n * inputs, offset=b["x"]).reshape(n, inputs)
        ytype = "<i4" if b["labels"] == "int32" else "<f4"
        y = np.frombuffer(self._records, dtype=ytype, count=n, offset=b["y"])
        req.y = y.astype(np.int64) if self.classes else y
        req.params, req.grads = self._pviews, self._gviews
        req.tables = _tables(h, data)
        if self.progress and req.op == "gradient":
            req._tell = lambda frame: write_frame(self.stdout, frame)
        if self.ahead and req.op == "gradient" and h.get("ahead"):
            req.ahead, req._frames = True, lambda: read_frame(self.stdin)[0]

    def stopped(self, req):
        """Answers a request sent ahead that the trainer stopped (Stopped)."""
        self.answer({"stopped": True})

    def answer(self, header, arrays=()):
        write_frame(self.stdout, header, arrays)

    def fail(self, exc):
        """Answers an error (the job fails with its text); the traceback goes to stderr."""
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        self.answer({"error": "%s: %s" % (type(exc).__name__, exc)})


def _inherited(offer):
    """Whether the program holds the descriptors the trainer offered: a
    launcher in between that closes inherited descriptors (Python's
    subprocess does by default) leaves them closed, or files the program
    opened since in their place, and the program then answers version 1,
    the pipe. The trainer's are memfds, which alone have seals to read."""
    try:
        for key in ("params_fd", "grads_fd", "records_fd"):
            fcntl.fcntl(offer[key], fcntl.F_GET_SEALS)
    except (OSError, KeyError, TypeError, AttributeError):
        return False
    return True


def _table_header(name, dim, optimizer=None):
    t = {"name": name, "dim": int(dim)}
    if optimizer:
        t["optimizer"] = optimizer
    return t


def _map(fd, size, prot):
    return mmap.mmap(fd, max(size, 1), flags=mmap.MAP_SHARED, prot=prot)


def _split(flat, tensors):
    out, off = [], 0
    for t in tensors:
        size = _size(t)
        out.append(flat[off : off + size].reshape(t["shape"]))
        off += size
    return out


def handle(model, ch, req):
    """Answers req with a numpy model (declare, gradient, evaluate)."""
    if req.op == "declare":
        h = req.header
        # tables first: the dense parameters may depend on the rows' widths
        tables = model.tables(h.get("id_fields") or []) if hasattr(model, "tables") else ()
        decl = model.declare(h.get("seed", 0), h["inputs"], h.get("outputs", 0), h.get("hidden") or [])
        ch.answer(ch.declare_answer([(n, s) for n, s, _ in decl], tables), [v.reshape(-1) for _, _, v in decl])
    elif req.op == "gradient":
        kw = step_seed_args(model.gradient, req)
        if req.tables:
            grads, loss, row_grads = model.gradient(req.params, req.x, req.y, req.tables, **kw)
        else:
            (grads, loss), row_grads = model.gradient(req.params, req.x, req.y, **kw), []
        answer_gradient(ch, req, grads, loss, row_grads)
    elif req.op == "evaluate":
        extra = (req.tables,) if req.tables else ()
        loss, correct = model.evaluate(req.params, req.x, req.y, *extra, **step_seed_args(model.evaluate, req))
        ch.answer({"count": len(req.y), "loss_sum": float(loss), "correct": int(correct)})
    else:
        raise ValueError("unknown op %r" % req.op)


def step_seed_args(method, req):
    """The keyword arguments step= and seed= (req.step, req.seed) for those
    of them that method takes as keyword parameters by that name; {} for a
    method written without them. At protocol version 1 a gradient request
    carries neither (both 0): a method taking seed= then gets a warning on
    stderr, once a process."""
    kw = {n: getattr(req, n) for n in _step_seed_names(method)}
    if "seed" in kw and req.op == "gradient" and not req.seeded:
        warn_unseeded("gtrainprog: protocol version 1 (the pipe: shared memory was not offered or "
                      "not accepted): gradient requests carry no step or seed, so the model's gradient gets "
                      "step=0 and seed=0 on every request: its random draws (dropout, augmentation) repeat")
    return kw


def _step_seed_names(method):
    """Which of step and seed method takes as keyword parameters; read once
    per function, not on every request (keyed by the function, not the
    bound method, whose hash is its model's: a model may be unhashable)."""
    fn = getattr(method, "__func__", method)
    try:
        return _keyword_names(fn)
    except TypeError:  # an unhashable callable: read it each time
        return _keyword_names.__wrapped__(fn)


@functools.lru_cache(maxsize=None)
def _keyword_names(fn):
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return ()
    named = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return tuple(n for n in ("step", "seed") if n in named)


_warned_unseeded = False


def warn_unseeded(text):
    """Prints text on stderr, once a process: a program's randomness is
    seeded alike on every request (protocol version 1 carries no seed)."""
    global _warned_unseeded
    if not _warned_unseeded:
        _warned_unseeded = True
        print(text, file=sys.stderr, flush=True)


def answer_gradient(ch, req, grads, loss, row_grads=(), written=False):
    """Answers a gradient request: the dense sums grads (added into the
    shared memory, or sent in the pipe), then one row-gradient array per
    table, in the pipe. grads must hold one array per declared parameter,
    in declared order, each with as many values as the parameter: anything
    else raises ValueError naming the problem, before anything is written,
    through the pipe and shared memory alike. Into shared memory it adds the
    sums (into the zeros the trainer wrote), or writes them over what the
    file holds once the program accepted overwrite; a request sent ahead
    waits for its go first, and is answered stopped when the trainer stops
    it. written says the dense sums are in req.grads already (the PyTorch
    adapter writes them there): grads is then not read."""
    header = {"count": len(req.y), "loss_sum": float(loss)}
    if len(row_grads) != len(req.tables):
        raise ValueError("%d row gradient arrays for %d tables" % (len(row_grads), len(req.tables)))
    rows = []
    for t, g in zip(req.tables, row_grads):
        g = np.asarray(g, dtype=np.float32)
        if g.size != t.rows.size:
            raise ValueError("table %s: row gradients of shape %s, want %s" % (t.name, g.shape, t.rows.shape))
        rows.append(g.reshape(-1))
    if written:
        if req.grads is None:
            raise ValueError("gradient sums written in place, but the request has no shared gradients (the pipe)")
        ch.answer(header, rows)
        return
    grads = _check_grads(req.header.get("params") or [], grads)
    if req.grads is None:
        ch.answer(header, grads + rows)
        return
    try:
        req.await_go()  # a request sent ahead: no gradient before the last push read them
    except Stopped:
        ch.stopped(req)
        return
    # Accepted overwrite: the trainer no longer clears the file, every value is written.
    put = np.copyto if ch.overwrite else (lambda into, g: np.add(into, g, out=into))
    for into, g in zip(req.grads, grads):
        put(into, g.reshape(into.shape))
    ch.answer(header, rows)


def _check_grads(specs, grads):
    """grads as flat float32 arrays, once they are one per declared
    parameter (specs: the request's "params") with its number of values."""
    if grads is None:
        raise ValueError("the model returned no gradient arrays (None) for %d declared parameters" % len(specs))
    grads = list(grads)
    if len(grads) != len(specs):
        msg = "the model returned %d gradient arrays for %d declared parameters" % (len(grads), len(specs))
        if len(grads) < len(specs):
            msg += " (none for %r and on)" % specs[len(grads)]["name"]
        raise ValueError(msg + ": gradient must return one gradient-sum array per parameter, in declared order")
    out = []
    for spec, g in zip(specs, grads):
        g = np.asarray(g, dtype=np.float32)
        if g.size != _size(spec):
            raise ValueError("the gradient of parameter %r has %d values (shape %s), want %d (shape %s)" % (
                spec["name"], g.size, tuple(g.shape), _size(spec), tuple(spec["shape"])))
        out.append(g.reshape(-1))
    return out


def serve(model, stdin=None, stdout=None):
    """Answers requests until stdin ends. An exception inside the model is
    answered as an error frame (the job fails with its text); the traceback
    also goes to stderr."""
    ch = Channel(stdin, stdout)
    for req in ch.requests():
        try:
            handle(model, ch, req)
        except Exception as e:  # the job's reason shows it
            ch.fail(e)
