"""DistributedDataParallel: one copy of the model per rank, each on its own part of the batch,
kept identical by averaging the gradients over the ranks before every optimizer step.

    dist.init_process_group("mpi")
    model = DistributedDataParallel(GPT(config))      # rank 0's weights everywhere
    for step in ...:
        loss = F.cross_entropy(model(x_rank), y_rank)   # this rank's part of the batch
        optimizer.zero_grad()
        loss.backward()
        model.sync_gradients()                         # every .grad := its mean over the ranks
        optimizer.step()

Why the mean of the ranks' gradients is the whole batch's gradient: with a mean loss over a
batch of B examples split into R equal parts, dL/dw = (1/B) sum_i g_i
= (1/R) sum_r [(1/(B/R)) sum_{i in part r} g_i], the mean over ranks of each rank's gradient.

Where PyTorch hooks the averaging into backward, here it is one explicit call after backward
(the engine has no post-backward hook): `sync_gradients()` gathers every parameter's .grad into
one flat buffer, makes one all-reduce over it, and writes the means back into the same .grad
arrays.  One buffer, not buckets: without overlap with backward, buckets only add calls.  A
forward after a backward whose gradients were not synced raises, so a forgotten call cannot
silently let the ranks drift apart.  Inside `with model.no_sync():` forwards do not ask for a
sync: gradients accumulate locally, and the sync after the last micro-batch averages the sums.

A parameter no rank gave a gradient keeps .grad None, as in one process; one that some ranks
gave a gradient gets the mean with zeros for the others (a flag per parameter rides along in the
same all-reduce).  Buffers are broadcast from rank 0 at construction only.
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

    def view(self, i):
        a, b = self.bounds[i]
        return self.buffer[a:b].reshape(self.tensors[i].shape)


def _flats(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault((t.device, str(t.dtype)), []).append(t)
    return [_Flat(ts) for ts in groups.values()]


class DistributedDataParallel(Module):
    def __init__(self, module: Module):
        super().__init__()
        if not dist.is_initialized():
            raise dist.DistributedError(
                "DistributedDataParallel needs the process group: "
                "call tensorgrad.distributed.init_process_group() first"
            )
        self.module = module
        self.require_backward_grad_sync = True
        object.__setattr__(self, "_unsynced", False)
        named = list(module.named_parameters()) + list(module.named_buffers())
        self._check_same_model(named)
        self._broadcast_from_rank0([t for _, t in named])
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._grad_flats = _flats(self._params)

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
        if self._unsynced and any(p.grad is not None for p in self._params):
            raise RuntimeError(
                "DistributedDataParallel: a backward ran since the last forward and its gradients were not "
                "averaged over the ranks: call model.sync_gradients() after loss.backward(), before optimizer.step()"
            )
        if autograd.is_grad_enabled() and self.require_backward_grad_sync:
            object.__setattr__(self, "_unsynced", True)
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Forwards (and their backwards) inside accumulate gradients locally, without a sync."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def sync_gradients(self):
        """Replace every parameter's .grad by its mean over the ranks (one all-reduce per device and dtype)."""
        g = dist.process_group.group()
        n = g.world_size
        for flat in self._grad_flats:
            flags = flat.buffer[flat.size :]
            for i, p in enumerate(flat.tensors):
                if p.grad is None:
                    flat.view(i)[...] = 0
                    flags[i] = 0
                else:
                    flat.view(i)[...] = raw_array(p.grad)
                    flags[i] = 1
            g.all_reduce(flat.buffer, "sum")
            flat.buffer[: flat.size] /= n
            had = backend.to_numpy(flags)  # one small read: which parameters any rank gave a gradient
            for i, p in enumerate(flat.tensors):
                if not had[i]:
                    continue
                if p.grad is None:
                    p.grad = Tensor._make(flat.view(i).copy(), flat.device, False)
                else:
                    raw_array(p.grad)[...] = flat.view(i)
        object.__setattr__(self, "_unsynced", False)
