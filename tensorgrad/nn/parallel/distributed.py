"""DistributedDataParallel: one copy of the model per rank, each on its own part of the batch,
kept identical by averaging the gradients over the ranks during backward, as PyTorch's:

    dist.init_process_group("mpi")
    model = DistributedDataParallel(GPT(config))      # rank 0's weights everywhere
    for step in ...:
        loss = F.cross_entropy(model(x_rank), y_rank)   # this rank's part of the batch
        optimizer.zero_grad()
        loss.backward()                                # every .grad := its mean over the ranks
        optimizer.step()

Why the mean of the ranks' gradients is the whole batch's gradient: with a mean loss over a
batch of B examples split into R equal parts, dL/dw = (1/B) sum_i g_i
= (1/R) sum_r [(1/(B/R)) sum_{i in part r} g_i], the mean over ranks of each rank's gradient.

How it works in the engine, as PyTorch's reducer: the parameters are split into buckets of about
`bucket_cap_mb` MiB (one device and dtype each), in reverse parameter order, which is about the
order backward finishes their gradients (the last layer's first).  Every parameter has a
post-accumulate hook (Tensor.register_post_accumulate_grad_hook): when backward has accumulated its
.grad, the hook copies it into its bucket's flat buffer; when a bucket is full, its all-reduce is
started, at once with MPI (a non-blocking Iallreduce, which goes on while backward computes the
earlier layers' gradients; a backend without it, NCCL here, all-reduces the bucket then, blocking),
buckets always in the same order on every rank.  At the end of backward (autograd.queue_callback)
the buckets not yet started are (their parameters had no gradient on this rank), every all-reduce
is waited for, and the means are written back into the same .grad arrays.

Inside `with model.no_sync():` forwards (and the backwards of their outputs) accumulate gradients
locally; the next backward of a forward outside syncs the sums, as in PyTorch.  `sync_gradients()`
stays as the explicit form: it averages gradients a backward left unsynced (after no_sync) in one
all-reduce, and does nothing when backward already averaged them.

A parameter no rank gave a gradient keeps .grad None, as in one process; one that some ranks
gave a gradient gets the mean with zeros for the others (a flag per parameter rides along in its
bucket's all-reduce).  Buffers are broadcast from rank 0 at construction only.
"""

from __future__ import annotations

import contextlib

from ... import autograd, backend
from ... import distributed as dist
from ...distributed.collectives import raw_array
from ...tensor import Tensor
from ..module import Module


class _Flat:
    """Tensors of one device and dtype, and one flat array to move them in (plus one flag each)."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.device, self.dtype = tensors[0].device, tensors[0].dtype
        self.xp = backend.namespace(self.device)
        self.bounds, start = [], 0
        for t in tensors:
            self.bounds.append((start, start + t.numel()))
            start += t.numel()
        self.size = start
        self.buffer = self.xp.empty(start + len(tensors), dtype=self.dtype)
        self.flags = self.buffer[start:]

    def view(self, i):
        a, b = self.bounds[i]
        return self.buffer[a:b].reshape(self.tensors[i].shape)

    def fill(self, i):
        """Copy tensor i's .grad (zeros and flag 0 if it has none) into the buffer."""
        g = self.tensors[i].grad
        if g is None:
            self.view(i)[...] = 0
            self.flags[i] = 0
        else:
            self.view(i)[...] = raw_array(g)
            self.flags[i] = 1

    def write_back(self, world_size):
        """The buffer holds sums over the ranks: write the means into every .grad."""
        self.buffer[: self.size] /= world_size
        had = backend.to_numpy(self.flags)  # one small read: which parameters any rank gave a gradient
        for i, p in enumerate(self.tensors):
            if not had[i]:
                continue
            if p.grad is None:
                p.grad = Tensor._make(self.view(i).copy(), self.device, False)
            else:
                raw_array(p.grad)[...] = self.view(i)


def _flats(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault((t.device, str(t.dtype)), []).append(t)
    return [_Flat(ts) for ts in groups.values()]


def _buckets(params, cap_bytes):
    """Parameters in reverse order, cut into buckets of about cap_bytes, one device and dtype each;
    the buckets in the order their first parameter comes (the order backward fills them)."""
    buckets, open_buckets = [], {}
    for p in reversed(params):
        key = (p.device, str(p.dtype))
        bucket = open_buckets.get(key)
        if bucket is None:
            bucket = open_buckets[key] = [[], 0]
            buckets.append(bucket)
        bucket[0].append(p)
        bucket[1] += p.numel() * p._data.itemsize
        if bucket[1] >= cap_bytes:
            del open_buckets[key]
    return [_Flat(ps) for ps, _ in buckets]


class DistributedDataParallel(Module):
    """DistributedDataParallel(module, bucket_cap_mb=None, find_unused_parameters=False), as
    PyTorch's (see the module docstring).  bucket_cap_mb: the size of a bucket in MiB (PyTorch's
    default 25 when None).  find_unused_parameters is accepted for PyTorch's code: a parameter
    without a gradient is always handled (its bucket is all-reduced at the end of backward)."""

    def __init__(self, module: Module, bucket_cap_mb=None, find_unused_parameters=False):
        super().__init__()
        if not dist.is_initialized():
            raise dist.DistributedError(
                "DistributedDataParallel needs the process group: "
                "call tensorgrad.distributed.init_process_group() first"
            )
        self.module = module
        self.require_backward_grad_sync = True
        named = list(module.named_parameters()) + list(module.named_buffers())
        self._check_same_model(named)
        self._broadcast_from_rank0([t for _, t in named])
        self._params = [p for p in module.parameters() if p.requires_grad]
        cap = (25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024
        state = dict(
            _buckets=_buckets(self._params, cap),
            _sync_next_backward=False,  # set by a forward outside no_sync, in grad mode
            _unsynced=False,  # a backward left local gradients (no_sync): sync_gradients() averages them
            _grad_flats=None,  # sync_gradients()'s buffers, made on first use
            _running=None,  # during a synced backward: [ready count per bucket, next bucket, finishers]
        )
        for name, value in state.items():
            object.__setattr__(self, name, value)
        place = {}
        for b, flat in enumerate(self._buckets):
            for i, p in enumerate(flat.tensors):
                place[id(p)] = (b, i)
        object.__setattr__(
            self, "_hook_handles", [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params]
        )
        object.__setattr__(self, "_place", place)

    def _check_same_model(self, named):
        """Every rank builds the same model: names, shapes and dtypes; else refuse, naming the difference."""
        mine = [(name, tuple(t.shape), str(t.dtype)) for name, t in named]
        every = [None] * dist.get_world_size()
        dist.all_gather_object(every, mine)
        for rank, theirs in enumerate(every[1:], start=1):
            if theirs != every[0]:
                diff = next(
                    ((a, b) for a, b in zip(every[0], theirs) if a != b),
                    (f"{len(every[0])} tensors", f"{len(theirs)} tensors"),
                )
                raise dist.DistributedError(
                    f"DistributedDataParallel: rank {rank}'s model differs from rank 0's: "
                    f"{diff[1]} where rank 0 has {diff[0]}"
                )

    def _broadcast_from_rank0(self, tensors):
        g = dist.process_group.group()
        for flat in _flats(tensors):
            for i, t in enumerate(flat.tensors):
                flat.view(i)[...] = raw_array(t)
            g.broadcast(flat.buffer[: flat.size], 0)
            for i, t in enumerate(flat.tensors):
                raw_array(t)[...] = flat.view(i)

    def forward(self, *args, **kwargs):
        sync = autograd.is_grad_enabled() and self.require_backward_grad_sync
        object.__setattr__(self, "_sync_next_backward", sync)
        object.__setattr__(self, "_running", None)  # what a backward that raised midway left
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Forwards inside (and the backwards of their outputs) accumulate gradients locally,
        without a sync; the first backward of a forward outside averages the sums."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _grad_ready(self, p):
        """Post-accumulate hook of every parameter: p.grad is final for this backward."""
        if not self._sync_next_backward:
            object.__setattr__(self, "_unsynced", True)
            return
        run = self._running
        if run is None:  # the first gradient of this backward
            run = [[0] * len(self._buckets), 0, []]
            object.__setattr__(self, "_running", run)
            autograd.queue_callback(self._finish_backward)
        b, i = self._place[id(p)]
        self._buckets[b].fill(i)
        run[0][b] += 1
        while run[1] < len(self._buckets) and run[0][run[1]] == len(self._buckets[run[1]].tensors):
            self._start(run, run[1])
            run[1] += 1

    def _start(self, run, b):
        """Start bucket b's all-reduce: non-blocking where the backend has it (MPI), else now."""
        g = dist.process_group.group()
        start = getattr(g, "all_reduce_start", None)
        buffer = self._buckets[b].buffer
        if start is not None:
            run[2].append(start(buffer))
        else:
            g.all_reduce(buffer, "sum")

    def _finish_backward(self):
        """End of a synced backward: start the buckets not started (some parameter had no
        gradient here), wait for every all-reduce, write the means into the .grads."""
        run = self._running
        object.__setattr__(self, "_running", None)
        object.__setattr__(self, "_sync_next_backward", False)
        for b in range(run[1], len(self._buckets)):
            flat = self._buckets[b]
            if run[0][b] < len(flat.tensors):
                for i in range(len(flat.tensors)):  # the parameters the hooks did not copy, again with every .grad
                    flat.fill(i)
            self._start(run, b)
        for finish in run[2]:
            finish()
        n = dist.get_world_size()
        for flat in self._buckets:
            flat.write_back(n)
        object.__setattr__(self, "_unsynced", False)

    def sync_gradients(self):
        """Replace every parameter's .grad by its mean over the ranks, if a backward left them
        local (no_sync); after a synced backward they are already averaged and nothing is done.
        One all-reduce per device and dtype."""
        if not self._unsynced:
            return
        if self._grad_flats is None:
            object.__setattr__(self, "_grad_flats", _flats(self._params))
        g = dist.process_group.group()
        for flat in self._grad_flats:
            for i in range(len(flat.tensors)):
                flat.fill(i)
            g.all_reduce(flat.buffer, "sum")
            flat.write_back(g.world_size)
        object.__setattr__(self, "_unsynced", False)
