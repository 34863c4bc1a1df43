"""gtrainprog_torch: serve a torch.nn.Module as a gtrain model program.

    import torch.nn.functional as F
    import gtrainprog_torch

    def build(inputs, outputs, hidden):          # called after seeding torch
        return torch.nn.Sequential(torch.nn.Linear(inputs, outputs))

    gtrainprog_torch.serve(build, lambda out, y: F.cross_entropy(out, y, reduction="none"))

build_module(inputs, outputs, hidden) returns the module (float32; a
build_module with a fourth parameter also gets id_fields, the records' id
fields, for Tables below); x comes
as (n, inputs) float32 (reshape inside the module, e.g. nn.Unflatten), y as
int64 class indices for a classifier (model.outputs > 1), float32 targets
otherwise. loss_fn(output, y) returns the loss of each record (reduction
"none"): the adapter sums it, so gradients are sums over the batch, which is
what gtrain wants. Evaluate counts argmax(output) == y for classifiers.

What the adapter does for the user:
- declares module.named_parameters() in order, with their initial values
  after torch.manual_seed(job seed);
- makes the arithmetic deterministic: torch.use_deterministic_algorithms,
  torch.set_num_threads(the trainer's cpu, at least 1), so a micro-batch's
  gradient is the same bits on every trainer and after every restart;
- seeds torch with the request's seed before each gradient (dropout and
  random augmentation are the same whichever trainer computes the
  micro-batch) and runs it in train mode; evaluate runs in eval mode.
  Only shared memory (protocol version 2) carries the seed: through the
  pipe (version 1, where the trainer cannot create shared memory) torch
  is seeded with 0 before every gradient, and the adapter says so once on
  stderr;
- through shared memory, points each parameter at the trainer's memory
  (no copy in) and writes the gradient sums into the gradient memory:
  nn.Linear layers' weight gradients straight from their product, after
  the backward pass, first layer first (below), the rest copied from
  autograd's as each is accumulated;
- accepts gradient requests sent ahead of their parameters (the trainer
  writes the next micro-batch while this one computes) when the module is
  made of torch.nn layers alone: each layer holding parameters awaits its
  own before its forward, and the loss is computed once all are back;
- runs on CUDA when torch.cuda.is_available() (the GPU of
  resources.trainer.gpu that the agent pins with CUDA_VISIBLE_DEVICES),
  copying parameters in and gradient sums out on each request, else on the
  CPU; it says which in the declare answer ("device": "cuda:0 (NAME)" or
  "cpu"), which the trainer logs, and on stderr. The sums on a GPU are not
  the CPU's bits: give every trainer of a job the same kind of device.

Embedding tables: a module holding gtrainprog_torch.Table(field, dim)
modules (a torch.nn.EmbeddingBag in mode "sum" whose rows live on gtrain's
pservers) declares them as tables: field names the records' id field, the
rows are created on first use from the job's seed and updated by the
pservers (optionally by an optimizer of the table's own: sgd, adagrad,
adam). Calling the Table in forward gives each record's weighted sum of its
rows, (n, dim). For each request the adapter swaps in the batch's distinct
rows as the bag's weight (requires_grad), with the records' entries as
local indices, offsets and per_sample_weights, and answers the weight's
.grad: one gradient sum per distinct row. The tables are no parameters:
named_parameters() declares the rest.

Buffers that are not parameters: a constant buffer is rebuilt by
build_module from the seed on every process, like the initial values. A
buffer the module updates as it trains (BatchNorm's running mean and
variance) would differ between trainers and be lost on a restart, so the
adapter switches BatchNorm layers to batch statistics
(track_running_stats=False): they normalise with the statistics of the
micro-batch in training and of the evaluated batch in evaluation; any other
buffer that changes during a gradient request (in place, replaced by
another tensor, added or removed: compared by name with
module.named_buffers()) is refused with an error answer.

Frozen parameters (requires_grad=False) are refused at declare: gtrain
would update them all the same. Freeze a parameter with the job spec's
init_from.freeze instead (a warm start: the pservers drop its gradients),
or make it a buffer that build_module rebuilds from the seed.
"""

import functools
import inspect
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import gtrainprog

# Parameters and records are read-only memory of the trainer's: torch warns
# that it cannot write them, which is the point.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
warnings.filterwarnings("ignore", message="The given buffer is not writable")


def _device():
    """CUDA's first visible GPU when there is one, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    return torch.device("cpu")


def device_name(device):
    """How the adapter says where it trains: "cpu", "cuda:0 (NAME)"."""
    if device.type != "cuda":
        return "cpu"
    return "%s (%s)" % (device, torch.cuda.get_device_name(device))


class Table(torch.nn.Module):
    """An embedding table of the records' id field `field`, dim values per
    row, pooled per record by weighted sum: torch.nn.EmbeddingBag(mode="sum")
    over the rows gtrain pulls for each batch. Call it with no argument in
    the module's forward: it returns (n, dim). optimizer (sgd, adagrad,
    adam) overrides the job's optimizer.kind for the rows."""

    def __init__(self, field, dim, optimizer=None):
        super().__init__()
        self.field, self.dim, self.optimizer = field, int(dim), optimizer
        self.bag = torch.nn.EmbeddingBag(1, self.dim, mode="sum", include_last_offset=True)
        self._batch = None

    def set_batch(self, rows, device, requires_grad):
        """Swaps in a request's rows (a gtrainprog.Rows): the distinct rows
        become the bag's weight."""
        w = torch.from_numpy(np.array(rows.rows, dtype=np.float32)).to(device)
        self.bag.weight = torch.nn.Parameter(w, requires_grad=requires_grad)
        self._batch = (
            torch.from_numpy(rows.index.astype(np.int64)).to(device),
            torch.from_numpy(rows.offsets.astype(np.int64)).to(device),
            torch.from_numpy(np.array(rows.weights, dtype=np.float32)).to(device),
        )

    def row_grads(self):
        g = self.bag.weight.grad
        if g is None:  # the loss does not depend on the table
            return np.zeros(tuple(self.bag.weight.shape), np.float32)
        return g.detach().cpu().numpy()

    def forward(self):
        if self._batch is None:
            raise RuntimeError("Table %s has no batch: gtrainprog_torch feeds it in gradient and evaluate" % self.field)
        index, offsets, weights = self._batch
        if self.bag.weight.shape[0] == 0:  # no ids in the batch: every sum is 0
            return torch.zeros(offsets.shape[0] - 1, self.dim, device=offsets.device)
        return self.bag(index, offsets, per_sample_weights=weights)


def _tables(module):
    """The module's Tables, in module order, each once."""
    out = []
    for m in module.modules():
        if isinstance(m, Table) and all(m is not t for t in out):
            out.append(m)
    return out


# Rows of a deferred weight's gradient computed, and told final, at once
# (Request.partial): each output row's sum is the same product whatever the
# band, and the band is the same on every trainer.
_BAND = 256


class _DeferredLinear(torch.autograd.Function):
    """F.linear whose backward leaves the weight's gradient out: it keeps
    (input, output gradient) in `later` for the adapter to multiply after
    the backward pass, straight into the gradient memory. The gradients of
    the input and the bias are autograd's own, the same products."""

    @staticmethod
    def forward(ctx, x, weight, bias, later):
        ctx.save_for_backward(x, weight)
        ctx.later = later
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        gx = g.matmul(weight) if ctx.needs_input_grad[0] else None
        gb = g.reshape(-1, g.shape[-1]).sum(0) if ctx.needs_input_grad[2] else None
        ctx.later.append((x.detach(), g))
        return gx, None, gb, None


class _Model:
    def __init__(self, build_module, loss_fn):
        self.build_module, self.loss_fn = build_module, loss_fn
        self.module = self.params = None
        self.classifier = False
        self.device = torch.device("cpu")

    def declare(self, h):
        threads = max(1, int(h.get("threads") or 1))
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set: once per process
            pass
        # cuBLAS is deterministic only with a fixed workspace, set before
        # CUDA starts.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.manual_seed(h.get("seed", 0))
        outputs = h.get("outputs", 0)
        self.classifier = outputs > 1
        args = [h["inputs"], outputs, h.get("hidden") or []]
        if len(inspect.signature(self.build_module).parameters) >= 4:
            args.append(list(h.get("id_fields") or []))  # build(inputs, outputs, hidden, id_fields)
        module = self.build_module(*args)
        _batch_statistics(module)
        module = module.float()
        self.tables = _tables(module)
        rows = {id(t.bag.weight) for t in self.tables}
        dense = [(n, p) for n, p in module.named_parameters() if id(p) not in rows]
        for n, p in dense:
            if not p.requires_grad:
                raise ValueError(
                    "parameter %r has requires_grad=False: gtrainprog_torch does not support frozen parameters "
                    "(gtrain would update it all the same). Leave it trainable and list it in the job spec's "
                    "init_from.freeze (a warm start from a saved model: the pservers drop its gradients), or "
                    "make it a buffer (register_buffer) that build_module rebuilds from the seed in every process" % n)
        decl = [(n, tuple(p.shape), p.detach().numpy().copy()) for n, p in dense]
        self.device = _device()
        self.module = module.to(self.device)
        rows = {id(t.bag.weight) for t in self.tables}
        self.params = [(n, p) for n, p in self.module.named_parameters() if id(p) not in rows]
        self._index = {id(p): j for j, (_, p) in enumerate(self.params)}  # a declared parameter's index
        self._later = None  # during a gradient request on the CPU: {param: [(input, output gradient)]}
        self._defer_linears()
        self._tell_ready()
        self.ahead = self._await_arrivals()
        print("gtrainprog_torch: training on %s" % device_name(self.device), file=sys.stderr, flush=True)
        return decl

    def _defer_linears(self):
        """On the CPU, runs each nn.Linear whose weight is declared through
        _DeferredLinear in gradient requests: its weight's gradient is one
        product after the backward pass, written straight into the gradient
        memory, in the order the next forward pass reads the weights. The
        trainer pushes the first layer's while the upper layers' compute,
        and its parameters come back first."""
        if self.device.type != "cpu":
            return
        for m in self.module.modules():
            if isinstance(m, torch.nn.Linear) and id(m.weight) in self._index:
                m.forward = functools.partial(self._linear, m, self._index[id(m.weight)])

    def _await_arrivals(self):
        """On the CPU, for a module whose parameters only modules of
        _AHEAD_MODULES read, each in its own forward: accepts gradient
        requests sent ahead, each such module awaiting its own parameters
        before its forward (a pre hook), the forward of a first layer
        running while the next layers' parameters are on their way. Any
        other module could read a parameter before it arrives: it gets the
        requests once all its parameters are back."""
        self._ahead_req = None
        if self.device.type != "cpu" or not _ahead_safe(self.module):
            return False
        for m in self.module.modules():
            own = [self._index[id(p)] for p in m.parameters(recurse=False) if id(p) in self._index]
            if own:
                m.register_forward_pre_hook(functools.partial(self._await_own, own))
        return True

    def _await_own(self, own, *_):
        if self._ahead_req is not None:
            self._ahead_req.await_params(own)

    def _linear(self, m, j, x):
        later = self._later
        if later is None or not torch.is_grad_enabled() or not m.weight.requires_grad:
            return F.linear(x, m.weight, m.bias)
        return _DeferredLinear.apply(x, m.weight, m.bias, later.setdefault(j, []))

    def _tell_ready(self):
        """On the CPU, tells gtrain each parameter's gradient as soon as
        autograd accumulated it and the adapter copied it into the shared
        gradients (a post hook on its AccumulateGrad node, as PyTorch's DDP
        before 2.0 found them), so the trainer pushes it while the lower
        layers compute. The deferred weights (_defer_linears) are told
        after the backward pass."""
        self._progress_req, self._accumulators = None, []
        if self.device.type != "cpu":
            return  # the sums are copied over after the backward
        for j, (_, p) in enumerate(self.params):
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(self._ready_hook(j))
            self._accumulators.append(acc)  # autograd keeps it only while referenced

    def _ready_hook(self, j):
        def ready(*_):
            req = self._progress_req
            if req is None or (self._later is not None and j in self._later):
                return  # a deferred weight's product adds this after the backward
            np.copyto(req.grads[j], self.params[j][1].grad.numpy())
            self._written.add(j)
            req.ready(j)
        return ready

    def _bind(self, req, with_grads):
        """Points the parameters at the request's and clears their grads
        (autograd's then hold this request's sums alone); on a GPU the
        parameters are copied there. It returns the arrays the sums go in:
        the shared gradients, or fresh arrays over the pipe."""
        for (_, p), v in zip(self.params, req.params):
            p.data = torch.from_numpy(v).to(self.device)
        if len(req.tables) != len(self.tables):
            raise ValueError("%d tables in the request, the module has %d" % (len(req.tables), len(self.tables)))
        for t, rows in zip(self.tables, req.tables):
            t.set_batch(rows, self.device, with_grads)
        if not with_grads:
            return None
        for _, p in self.params:
            p.grad = None
        return req.grads if req.grads is not None else [np.zeros(p.shape, np.float32) for _, p in self.params]

    def _inputs(self, req):
        return torch.from_numpy(req.x).to(self.device), torch.from_numpy(req.y).to(self.device)

    def gradient(self, req):
        """Writes the request's gradient sums over grads (the trainer does
        not clear the shared gradients: overwrite, accepted at declare),
        and returns them with the loss sum and the tables' row gradients."""
        grads = self._bind(req, True)
        before = {n: (b, b.clone()) for n, b in self.module.named_buffers()}
        if not req.seeded:
            gtrainprog.warn_unseeded(
                "gtrainprog_torch: protocol version 1 (the pipe: the trainer offered no shared memory): gradient "
                "requests carry no seed, so torch is seeded with 0 before every gradient: dropout and random "
                "augmentation draw the same on every request (of a batch size)")
        torch.manual_seed(req.seed)
        self.module.train()
        x, y = self._inputs(req)
        self._written = set()
        self._later = {} if self.device.type == "cpu" else None
        self._ahead_req = req if req.ahead else None
        try:
            out = self.module(x)
            req.await_go()  # every parameter back, and the last push read the gradients: the loss may read any
            self._ahead_req = None
            losses = self.loss_fn(out, y)
            if losses.dim() != 1 or losses.shape[0] != len(req.y):
                raise ValueError("loss_fn must return one loss per record (reduction='none'), got shape %s" % (tuple(losses.shape),))
            self._progress_req = req if req.grads is not None and self.device.type == "cpu" else None
            losses.sum().backward()
            if self._progress_req is not None:  # the deferred products read no parameter
                req.release(*range(len(self.params)))
            if self._later is not None:  # on the CPU
                self._write_deferred(grads)
        finally:
            self._progress_req = self._later = self._ahead_req = None
        for j, ((_, p), g) in enumerate(zip(self.params, grads)):
            if j in self._written:
                continue
            if p.grad is None:  # the loss does not depend on it
                g.fill(0)
            else:  # on a GPU, or no hook told it
                np.copyto(g, p.grad.cpu().numpy())
        self._check_buffers(before)
        return grads, float(losses.detach().double().sum()), [t.row_grads() for t in self.tables]

    def _check_buffers(self, before):
        """Raises ValueError when the module's buffers now (by name) are not
        before's ({name: (tensor, copy of its values)}): a buffer added,
        removed, replaced by another tensor or changed in place."""
        now = dict(self.module.named_buffers())
        for n in sorted(set(before) | set(now)):
            if n not in now:
                what = "removed buffer %r" % n
            elif n not in before:
                what = "added buffer %r" % n
            elif now[n] is not before[n][0]:
                what = "replaced buffer %r by another tensor" % n
            elif not torch.equal(now[n], before[n][1]):
                what = "changed the values of buffer %r" % n
            else:
                continue
            raise ValueError("the module %s during a gradient request; gtrain keeps no buffers between requests "
                             "(see gtrainprog_torch's doc: BatchNorm runs on batch statistics, any other buffer "
                             "must stay as build_module made it)" % what)

    def _write_deferred(self, grads):
        """Writes the deferred weights' gradients, in forward order and in
        bands of _BAND rows, each told as it is final: the sum over the
        layer's calls of output gradient^T x input, plus what autograd
        accumulated where the weight was also used elsewhere. A pserver
        holding a weight's first rows and a lower layer answers before the
        weight's last rows are computed."""
        req = self._progress_req
        with torch.no_grad():
            for j, later in self._later.items():
                out = torch.from_numpy(grads[j])
                rows, grad = out.shape[0], self.params[j][1].grad
                for r0 in range(0, rows, _BAND):
                    r1 = min(rows, r0 + _BAND)
                    band = out[r0:r1]
                    for k, (x, g) in enumerate(later):
                        x2, g2 = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])[:, r0:r1]
                        if k == 0:
                            torch.mm(g2.t(), x2, out=band)
                        else:
                            band.addmm_(g2.t(), x2)
                    if not later:  # the loss does not depend on this call
                        band.zero_()
                    if grad is not None:
                        band.add_(grad[r0:r1])
                    if req is not None and r1 < rows:
                        req.partial(j, r1 * out.shape[1])
                self._written.add(j)
                if req is not None:
                    req.ready(j)

    def evaluate(self, req):
        self._bind(req, False)
        self.module.eval()
        x, y = self._inputs(req)
        with torch.no_grad():
            out = self.module(x)
            loss = float(self.loss_fn(out, y).double().sum())
        correct = int((out.argmax(dim=1) == y).sum()) if self.classifier else 0
        return loss, correct


# The modules whose forward reads its own parameters and no other's: a
# model built of these alone (and of torch.nn modules holding none) may
# compute a request sent ahead, each awaiting its parameters.
_AHEAD_MODULES = (
    torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d,
    torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d,
    torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.Embedding, torch.nn.PReLU,
)


def _ahead_safe(module):
    """Whether every module is torch.nn's (no forward of the user's that
    could read any parameter), every one holding parameters is one of
    _AHEAD_MODULES exactly (a subclass may read them elsewhere, as
    MultiheadAttention reads its out_proj's), and no module has a hook of
    its own: weight_norm's pre hook, registered at build, would read the
    weight's parameters before the adapter's hook awaits them (torch 1.13
    cannot put a hook first), and any hook may read any parameter."""
    mod = torch.nn.modules.module
    for hooks in ("_global_forward_pre_hooks", "_global_forward_hooks"):
        if getattr(mod, hooks, None):
            return False
    for m in module.modules():
        if not type(m).__module__.startswith("torch.nn."):
            return False
        if type(m) not in _AHEAD_MODULES and next(m.parameters(recurse=False), None) is not None:
            return False
        if m._forward_pre_hooks or m._forward_hooks:
            return False
    return True


def _batch_statistics(module):
    for m in module.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            m.track_running_stats = False
            m.running_mean = m.running_var = m.num_batches_tracked = None


def serve(build_module, loss_fn, stdin=None, stdout=None):
    """Answers gtrain's requests with the module build_module returns until
    stdin ends; an exception is answered as an error (the job fails with
    its text; the traceback goes to stderr)."""
    model = _Model(build_module, loss_fn)
    ch = gtrainprog.Channel(stdin, stdout)
    for req in ch.requests():
        try:
            _answer(model, ch, req)
        except Exception as e:
            ch.fail(e)


def _answer(model, ch, req):
    if req.op == "declare":
        decl = model.declare(req.header)
        tables = [(t.field, t.dim, t.optimizer) for t in model.tables]
        cpu = model.device.type == "cpu"
        header = ch.declare_answer([(n, s) for n, s, _ in decl], tables, progress=cpu, overwrite=True, ahead=model.ahead)
        header["device"] = device_name(model.device)
        ch.answer(header, [v.reshape(-1) for _, _, v in decl])
    elif req.op == "gradient":
        try:
            grads, loss, row_grads = model.gradient(req)
        except gtrainprog.Stopped:
            ch.stopped(req)
            return
        # through shared memory the sums are written in place already
        gtrainprog.answer_gradient(ch, req, grads, loss, row_grads, written=req.grads is not None)
    elif req.op == "evaluate":
        loss, correct = model.evaluate(req)
        ch.answer({"count": len(req.y), "loss_sum": loss, "correct": correct})
    else:
        raise ValueError("unknown op %r" % req.op)


if __name__ == "__main__":
    sys.exit("gtrainprog_torch is a module: import it from your program (see examples/program/torch_cnn.py)")
