"""Grad mode, per thread as PyTorch's: `no_grad`, `enable_grad`, `set_grad_enabled` and
`inference_mode` (context managers and decorators), and the thread-local state the engine reads
(`_state`: the mode, the running profile, the backward pass's callback queue: `queue_callback`).
The engine (autograd.py) imports this module; it imports nothing of tensorgrad."""

from __future__ import annotations

import functools
import inspect
import threading


class _ThreadState(threading.local):
    """What the engine keeps per thread, as PyTorch does: a thread's `no_grad` or profile, and the
    backward pass it is running, are its own.  A new thread starts from these class defaults
    (gradients on, no profile, no pass), whatever the thread that started it had.  Reading one
    is an attribute read on a thread-local object: `apply` reads `grad_enabled` (when an input
    requires grad); `profiler` is read by the profiler's observer (observers.py), which is on the
    engine's hook only while some thread profiles."""

    grad_enabled = True  # grad mode: no_grad / enable_grad / set_grad_enabled / inference_mode
    inference_mode = False  # inside inference_mode()
    profiler = None  # the tg.profiler.profile running in this thread, if any (it sets and clears this itself)
    callbacks = None  # the queue_callback list of the backward pass this thread is running (None: no pass)


_state = _ThreadState()


def is_grad_enabled() -> bool:
    """Whether ops record the graph in this thread (PyTorch's torch.is_grad_enabled; per thread)."""
    return _state.grad_enabled


def in_backward() -> bool:
    """Whether this thread is running a backward pass (a hook's code runs inside one)."""
    return _state.callbacks is not None


def queue_callback(fn):
    """Have `fn()` run once the backward pass now running in this thread has finished (PyTorch's
    Variable._execution_engine.queue_callback): a hook that starts work during backward (the
    all-reduces of DistributedDataParallel) finishes it there.  The queue is the pass's own: a
    backward in another thread (or one nested in a hook) neither runs nor drops it, and a pass
    that raises drops its queue.  Outside a backward pass it raises, as PyTorch."""
    callbacks = _state.callbacks
    if callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    callbacks.append(fn)


class _GradMode:
    """Base of no_grad / enable_grad / set_grad_enabled: a context manager and a decorator.
    The mode is the calling thread's (as PyTorch's: thread-local)."""

    enabled = True

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):  # the mode holds in each stretch the generator runs (PyTorch's)
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:  # thrown into the wrapper: passed on to the generator
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value

        return wrapper

    def clone(self):
        return type(self)()


class _NoParamGradMode(_GradMode):
    """A mode without parameters, usable bare as a decorator too (`@tg.no_grad`, as PyTorch's)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamGradMode):
    """No graph is recorded inside: `with tg.no_grad():`, `@tg.no_grad()` or `@tg.no_grad`."""

    enabled = False


class enable_grad(_NoParamGradMode):
    enabled = True


class inference_mode(_GradMode):
    """torch.inference_mode(mode=True): inside, this thread records no graph, as in no_grad, and
    `is_inference_mode_enabled()` is True; `inference_mode(False)` turns grad mode on (PyTorch's
    guard sets grad mode to `not mode`).  A context manager and a decorator, per thread.
    Difference from PyTorch: tensors made inside are ordinary tensors, not "inference tensors"
    (PyTorch refuses to save those for a later backward; here they may be used anywhere)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare, @tg.inference_mode: mode is the function

    def __init__(self, mode: bool = True):
        if not isinstance(mode, bool):
            return  # __new__ returned the decorated function; Python skips __init__ then (not an instance)
        self.mode = mode
        self.enabled = not mode

    def __enter__(self):
        self._prev_inference = _state.inference_mode
        _state.inference_mode = self.mode
        super().__enter__()

    def __exit__(self, *exc):
        _state.inference_mode = self._prev_inference
        return super().__exit__(*exc)

    def clone(self):
        return type(self)(self.mode)


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()` (torch.is_inference_mode_enabled)."""
    return _state.inference_mode


class set_grad_enabled(_GradMode):
    """Grad mode on or off (torch.set_grad_enabled): as a call, `tg.set_grad_enabled(False)`, it
    lasts until changed; as `with tg.set_grad_enabled(mode):` or `@tg.set_grad_enabled(mode)`, the
    previous mode is restored after.  Only this thread's mode changes."""

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}"
            )
        self._prev = _state.grad_enabled
        self.enabled = mode
        _state.grad_enabled = mode

    def __enter__(self):
        pass  # already set by the call

    def __call__(self, fn):
        _state.grad_enabled = self._prev  # as a decorator it sets the mode only while fn runs
        return super().__call__(fn)

    def clone(self):
        return type(self)(self.enabled)
