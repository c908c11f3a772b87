"""Version counters and in-place writes in the graph: how backward stays right when a tensor is
written in place (x[0] = 1, x += 1, opt.step()) after an op read it.

Version counters (as PyTorch's).  Every tensor has one, `tensor._counter`, a list shared with its
views (an op whose output array is a view of an input's shares that input's list); each in-place
write bumps `counter[0]`.  When an op that saved arrays is recorded, `Function.apply` notes with
`taken` the version of each of its tensors (the output and the inputs) then; before that op's
backward runs, `check` compares them with the versions now, and only where one moved does it look
for a saved array in that tensor's memory (then it raises PyTorch's "modified by an inplace
operation").  So the forward pays a counter read per tensor, and the walk from arrays to their
storage runs only for a write that happened.  The ops themselves know nothing of this.

In-place writes recorded in the graph (PyTorch's rebase_history).  A write into a tensor that
requires grad (out += bias, y[i] = v) is a node of the graph too (ops/inplace.py), and the same
tensor object stands for the new values afterwards: `rebase_history` makes the write's node the
tensor's history and keeps the version before the write as an alias, `node.previous`.  Nodes made
earlier from the tensor still hold the tensor object, so each node notes the in-place `clock` when
it is made (`Function.epoch`) and each write its stamp on that clock (`Function.stamp`);
`parents_seen` walks a node's inputs back to the versions it read.  While no write has been
recorded (clock 0, the common case) the engine reads the clock once per node and nothing more.
"""

from __future__ import annotations

import threading

from . import backend
from .tensor_base import TensorBase

# Process-wide: the clock of in-place writes recorded in the graph, read by every node made
# (Function.__init__) and by the backward walk; 0: none yet.  One clock for all threads (its stamps
# only need to be ordered); it moves under _clock_lock, so two threads' writes never share a stamp.
clock = 0
_clock_lock = threading.Lock()

_NOT_ARRAYS = (int, float, bool, str, type(None))


# --------------------------------------------------------------------------- version counters
def taken(output, tensors):
    """[(version counter, version now, array)] of the output and each tensor argument: what
    `check` compares at backward.  The array is the tensor's array now, so that the memory a later
    write went to is the memory the op saw."""
    records = [(output._counter, output._counter[0], output._data)]
    for t in tensors:
        records.append((t._counter, t._counter[0], t._data))
    return records


def taken_saved(tensors):
    """The records of tensors saved themselves (a custom Function's save_for_backward): array None,
    so that any write to one of them after the forward raises at backward."""
    return [(t._counter, t._counter[0], None) for t in tensors if t is not None]


def _saved_arrays(saved):
    """The arrays among an op's saved values (an index or a list of arrays: one level in)."""
    for item in saved:
        for array in item if type(item) is tuple or type(item) is list else (item,):
            if not isinstance(array, _NOT_ARRAYS):
                yield array


def _saved_in(ctx, array) -> bool:
    """Whether one of ctx's saved arrays is `array` (a tensor's array at forward time) or lies in its
    memory.  A saved array that is one of the op's tensors' own arrays stands for that tensor alone
    (the parameters of a fused optimizer are views of one flat array, each with its own counter); a
    saved view, or a fresh array the output views, is matched by storage: with every tensor whose
    array shares it."""
    own = {id(a) for _, _, a in ctx.versions if a is not None}
    root = None
    for s in _saved_arrays(ctx.saved):
        if s is array:
            return True
        if id(s) in own:
            continue
        if root is None:
            root = backend.storage_of(array)
        if backend.storage_of(s) is root:
            return True
    return False


def check(ctx, output):
    """Raise if an array `ctx` (which made `output`) saved was written in place after its forward.

    ctx.versions holds (counter, version, array) per tensor of the op; array None: the tensor itself
    was saved (a custom Function's save_for_backward), so any write to it raises."""
    for counter, version, array in ctx.versions:
        if counter[0] != version and (array is None or _saved_in(ctx, array)):
            i = next(
                (i for i, p in enumerate(ctx.parents) if isinstance(p, TensorBase) and p._counter is counter), None
            )
            if i is not None or output._counter is counter:
                t, what = (ctx.parents[i], f"input {i}") if i is not None else (output, "output 0")
                which = f"[{t.dtype} tensor of shape {tuple(t.shape)}], which is {what} of"
            else:  # a tensor a custom Function made inside its forward and saved
                which = "a tensor saved by"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {which} {type(ctx).__name__}Backward, is at version {counter[0]}; "
                f"expected version {version} instead. Hint: the write came after the forward pass that saved "
                "it (x[...] = v, x += v, x.add_(v), opt.step()); write to a clone(), or call backward before "
                "the write."
            )


# --------------------------------------------------------------------------- in-place ops in the graph
def rebase_history(tensor, node, inputs, versions=None, previous=None, view=False, parent=None):
    """Make `node`, an in-place op that just wrote into `tensor`'s storage, the tensor's history
    (PyTorch's rebase_history): the same tensor object now stands for the new values.

    The graph still needs the version before the write (the node's own input, and the input of
    every node made earlier from this tensor): it becomes `node.previous`, an alias object holding
    the old `_ctx` and `requires_grad` (the storage, now overwritten, is shared; the version counter
    keeps any node that saved the old values from using them), and the node's first parent, before
    its other `inputs`.  The write gets a stamp, the clock's next tick; the stamp is also appended
    to the storage's counter (`counter[1:]`), so that a view taken before the write can be told
    apart (`parents_seen`).  `versions`: the node's version records, taken before the write.
    previous: the alias, when the caller made it.  The tensor's grad hooks registered so far
    (`register_hook`) go to `previous`: they see the gradient of the version before the write, as
    PyTorch's; `retain_grad` stays with the tensor (its .grad is the new version's).
    view=True: `node` writes nothing, it re-derives a view (x[i]) of its rebased base, its only
    parent (`inputs`).  parent: the write's first input where it is not `previous` (a write through
    a view reads the view's places from its base, as PyTorch's CopySlices: `previous`, with the
    hooks, then has only the gradient of the readers of the view before the write)."""
    global clock
    if previous is None:
        previous = type(tensor)._make(tensor._data, tensor.device, tensor._requires_grad)
        previous._ctx = tensor._ctx
        previous._counter = tensor._counter
    with _clock_lock:  # `+= 1` is a read and a write: two threads could take the same stamp
        clock += 1
        stamp = clock
    hooks = tensor._hooks
    if hooks is not None and hooks.grad:  # registered before the write: the version before it is theirs, as in PyTorch
        moved = type(hooks)()
        moved.grad, hooks.grad = hooks.grad, {}  # (the dict itself: a handle's remove() still finds its hook)
        previous._hooks = moved
    node.previous = previous
    node.stamp = stamp
    node.rederived_view = view
    if not view:
        tensor._counter.append(stamp)
    node.attach(tensor, tuple(inputs) if view else (previous if parent is None else parent, *inputs), versions)
    tensor._requires_grad = True
    return previous


def parents_seen(ctx):
    """ctx's inputs in the versions ctx read (only called once an in-place write was recorded).

    Nodes keep tensor objects, and a recorded in-place write rebinds its tensor to a new node;
    a node made before the write (ctx.epoch < the write's stamp) read the version before it, so
    the chain of `previous` versions is walked back to that one.  And a view of a tensor (x[0],
    x.T) made before a recorded write to the storage they share, then read after it, would pair
    the new values with the old history: that raises instead of giving a wrong gradient."""
    out = []
    for p in ctx.parents:
        if isinstance(p, TensorBase):
            node = p._ctx
            while node is not None and node.stamp > ctx.epoch:
                p = node.previous
                node = p._ctx
            counter = p._counter
            if len(counter) > 1 and node is not None and is_view(node, counter):
                born = node.stamp or node.epoch
                if any(born < s <= ctx.epoch for s in counter[1:]):
                    raise RuntimeError(
                        f"a view made by {type(node).__name__}Backward was used by {type(ctx).__name__}Backward "
                        "after an in-place operation recorded in the graph wrote into the tensor it views; its "
                        "history does not include that write. Take the view again after the write (or clone it)."
                    )
        out.append(p)
    return out


def check_root(t):
    """`parents_seen`'s rule for a tensor backward starts from: a view made before a recorded
    in-place write to the storage it shares has the new values and the old history, so its
    gradient would be the old one's: that raises."""
    node, counter = t._ctx, t._counter
    if node is None or len(counter) < 2 or not is_view(node, counter):
        return
    born = node.stamp or node.epoch
    if any(s > born for s in counter[1:]):
        raise RuntimeError(
            f"a view made by {type(node).__name__}Backward was used as a root of backward after an in-place operation "
            "recorded in the graph wrote into the tensor it views; its history does not include that write. Take "
            "the view again after the write (or clone it)."
        )


def kept_after_backward(ctx, output) -> bool:
    """Whether a backward without retain_graph leaves `ctx`, the node that made `output`, as it is:
    a view of its input that saved no array (a basic index, a shape), as PyTorch's view nodes,
    which save no tensor.  It holds nothing the view's own array does not (the input's memory), and
    a later backward may pass through it again (a slice of a parameter taken once, used every step)."""
    if not is_view(ctx, output._counter):
        return False
    return not any(backend.is_array(a) for a in _saved_arrays(ctx.saved or ()))


def is_view(node, counter) -> bool:
    """Whether `node` made a view: an output sharing the storage (`counter`) of one of its inputs
    (an in-place write's node shares its previous version's storage but is not one)."""
    if node.stamp:
        return node.rederived_view
    return node.parents is not None and any(isinstance(q, TensorBase) and q._counter is counter for q in node.parents)
