"""gtrainprog_torch: serve a torch.nn.Module as a gtrain model program.

    import torch.nn.functional as F
    import gtrainprog_torch

    def build(inputs, outputs, hidden):          # called after seeding torch
        return torch.nn.Sequential(torch.nn.Linear(inputs, outputs))

    gtrainprog_torch.serve(build, lambda out, y: F.cross_entropy(out, y, reduction="none"))

build_module(inputs, outputs, hidden) returns the module (float32); x comes
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
  micro-batch) and runs it in train mode; evaluate runs in eval mode;
- through shared memory, points each parameter at the trainer's memory and
  its .grad at the gradient memory (zeros), so autograd adds the sums in
  place: no copy in or out;
- runs on CUDA when torch.cuda.is_available() (the GPU of
  resources.trainer.gpu that the agent pins with CUDA_VISIBLE_DEVICES),
  copying parameters in and gradient sums out on each request, else on the
  CPU; it says which in the declare answer ("device": "cuda:0 (NAME)" or
  "cpu"), which the trainer logs, and on stderr. The sums on a GPU are not
  the CPU's bits: give every trainer of a job the same kind of device.

Buffers that are not parameters: a constant buffer is rebuilt by
build_module from the seed on every process, like the initial values. A
buffer the module updates as it trains (BatchNorm's running mean and
variance) would differ between trainers and be lost on a restart, so the
adapter switches BatchNorm layers to batch statistics
(track_running_stats=False): they normalise with the statistics of the
micro-batch in training and of the evaluated batch in evaluation; any other
buffer that changes during a gradient request is refused with an error.
"""

import os
import sys
import warnings

import numpy as np
import torch

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
        module = self.build_module(h["inputs"], outputs, h.get("hidden") or [])
        _batch_statistics(module)
        module = module.float()
        decl = [(n, tuple(p.shape), p.detach().numpy().copy()) for n, p in module.named_parameters()]
        self.device = _device()
        self.module = module.to(self.device)
        self.params = list(self.module.named_parameters())
        self.buffers = [b for _, b in self.module.named_buffers()]
        print("gtrainprog_torch: training on %s" % device_name(self.device), file=sys.stderr, flush=True)
        return decl

    def _bind(self, req, with_grads):
        """Points the parameters at the request's and, for a gradient, their
        grads at zeros to add into (the shared gradients, or fresh arrays
        over the pipe). On a GPU the parameters are copied there and the
        grads are zeros there, added into the arrays after the backward."""
        for (_, p), v in zip(self.params, req.params):
            p.data = torch.from_numpy(v).to(self.device)
        if not with_grads:
            return None
        grads = req.grads if req.grads is not None else [np.zeros(p.shape, np.float32) for _, p in self.params]
        for (_, p), g in zip(self.params, grads):
            p.grad = torch.from_numpy(g) if self.device.type == "cpu" else torch.zeros_like(p)
        return grads

    def _inputs(self, req):
        return torch.from_numpy(req.x).to(self.device), torch.from_numpy(req.y).to(self.device)

    def gradient(self, req):
        grads = self._bind(req, True)
        before = [b.clone() for b in self.buffers]
        torch.manual_seed(req.seed)
        self.module.train()
        x, y = self._inputs(req)
        losses = self.loss_fn(self.module(x), y)
        if losses.dim() != 1 or losses.shape[0] != len(req.y):
            raise ValueError("loss_fn must return one loss per record (reduction='none'), got shape %s" % (tuple(losses.shape),))
        losses.sum().backward()
        for (name, p), g in zip(self.params, grads):
            if p.grad.data_ptr() != g.ctypes.data:  # on a GPU, or autograd replaced it: copy the sums over
                np.add(g, p.grad.cpu().numpy(), out=g)
        for a, b in zip(before, self.buffers):
            if not torch.equal(a, b):
                raise ValueError("the module changed a buffer during a gradient request; gtrain keeps no buffers between requests (see gtrainprog_torch's doc)")
        return grads, float(losses.detach().double().sum())

    def evaluate(self, req):
        self._bind(req, False)
        self.module.eval()
        x, y = self._inputs(req)
        with torch.no_grad():
            out = self.module(x)
            loss = float(self.loss_fn(out, y).double().sum())
        correct = int((out.argmax(dim=1) == y).sum()) if self.classifier else 0
        return loss, correct


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
        header = ch.declare_answer([(n, s) for n, s, _ in decl])
        header["device"] = device_name(model.device)
        ch.answer(header, [v.reshape(-1) for _, _, v in decl])
    elif req.op == "gradient":
        grads, loss = model.gradient(req)
        header = {"count": len(req.y), "loss_sum": loss}
        ch.answer(header, [g.reshape(-1) for g in grads] if req.grads is None else ())
    elif req.op == "evaluate":
        loss, correct = model.evaluate(req)
        ch.answer({"count": len(req.y), "loss_sum": loss, "correct": correct})
    else:
        raise ValueError("unknown op %r" % req.op)


if __name__ == "__main__":
    sys.exit("gtrainprog_torch is a module: import it from your program (see examples/program/torch_cnn.py)")
