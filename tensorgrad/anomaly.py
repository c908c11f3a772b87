"""Anomaly mode (torch.autograd.detect_anomaly): find the op whose backward made a NaN, and the
line of your code that created that op.

While it is on (`with tg.autograd.detect_anomaly():` or `tg.autograd.set_detect_anomaly(True)`),
its observer (`_AnomalyObserver`, on the engine's one hook: observers.py) is on:
- forward: on each node `Function.apply` records, it keeps the traceback of the call that made it
  (`forward_stack`: the user's frames, tensorgrad's own trimmed away) in `node.stack`;
- backward: it hands each node's gradients to `check_gradients`, which, when one holds a NaN,
  warns with that node's forward traceback and raises PyTorch's "Function 'SqrtBackward0'
  returned nan values in its 0th output." (as PyTorch: NaN only; an inf gradient passes, since
  inf is often a true value).

When it is off, the observer is not on the hook, and the engine does nothing for it.  The mode is
the process's, as in PyTorch (the grad mode, by contrast, is per thread).  The engine imports this
module; it imports nothing of tensorgrad but the observer hook.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import warnings

from . import observers

# Process-wide, as PyTorch's anomaly mode (a global flag there too, not a thread's): turned on in
# one thread, every thread's ops record their stacks and every backward checks its gradients.
enabled = False  # record stacks and check gradients (while True, _OBSERVER is on the engine's hook)
check_nan = True  # with enabled: raise on a NaN gradient (False: record the stacks only)

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (tg.autograd.detect_anomaly), as torch.is_anomaly_enabled."""
    return enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks each backward's results for NaN, as torch.is_anomaly_check_nan_enabled."""
    return check_nan


class set_detect_anomaly:
    """Turn anomaly mode on or off: as a call (`set_detect_anomaly(True)`, lasting until turned off)
    or as a context manager (`with set_detect_anomaly(True):`, the previous mode restored after)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


class detect_anomaly:
    """`with detect_anomaly():` or `@detect_anomaly()`: anomaly mode inside, the previous mode after.
    Warns on entry, as PyTorch does, since every op then records its traceback."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
            "enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


def _set(mode, nan):
    global enabled, check_nan
    enabled, check_nan = bool(mode), bool(nan)
    (observers.add if enabled else observers.remove)(_OBSERVER)


class _AnomalyObserver(observers.Observer):
    """Anomaly mode on the engine's hook: a recorded node keeps its forward traceback, and every
    backward's gradients are checked."""

    def recorded(self, ctx):  # where the user's code made this node
        ctx.stack = forward_stack()

    def gradients(self, ctx, in_grads):
        check_gradients(ctx, in_grads)


_OBSERVER = _AnomalyObserver()


def forward_stack():
    """The traceback of the current call, without tensorgrad's own frames: where the user made the op."""
    stack = traceback.extract_stack()
    return traceback.StackSummary.from_list([f for f in stack if not f.filename.startswith(_PACKAGE)])


def backward_name(ctx) -> str:
    """PyTorch's name of a node's backward: SqrtBackward0 (a fused kernel goes by the op it replaces)."""
    return getattr(type(ctx), "replaces", type(ctx)).__name__ + "Backward0"


def check_gradients(ctx, in_grads):
    """Raise if one of the gradients a node's backward returned holds a NaN, first warning with the
    traceback of the forward call that made the node (as PyTorch's anomaly mode)."""
    if not check_nan:
        return
    for i, g in enumerate(in_grads):
        if g is not None and bool(ctx.xp.isnan(g).any()):
            name = backward_name(ctx)
            stack = ctx.stack
            where = "".join(stack.format()) if stack else "  (not recorded: the op ran before anomaly mode was on)\n"
            message = f"Error detected in {name}. Traceback of forward call that caused the error:\n{where}"
            warnings.warn(message, stacklevel=_user_level())
            raise RuntimeError(f"Function '{name}' returned nan values in its {i}th output.")


def _user_level() -> int:
    """The stacklevel of the first caller outside tensorgrad (the user's `loss.backward()`)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    return level
