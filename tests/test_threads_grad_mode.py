"""What belongs to a thread and what to the process, as in PyTorch.

Per thread: the grad mode (no_grad, enable_grad, set_grad_enabled; a new thread starts with
gradients on), the running profile, and the callbacks queued during a backward pass (they belong
to that pass, and run at its end).  Process-wide, as in PyTorch: anomaly mode.

The threads are interleaved with threading.Event, never with sleeps: each step waits for the
other thread to reach its point, so the order is the same on every run."""

from __future__ import annotations

import threading

import pytest

import tensorgrad as tg

WAIT = 10  # seconds an Event may take before the test fails instead of hanging (a step takes microseconds)


def in_thread(fn):
    """Start fn in a new thread; join() returns its result or raises its exception."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as e:  # handed to the test's thread
            box["error"] = e

    thread = threading.Thread(target=target)
    thread.start()

    def join():
        thread.join(WAIT)
        assert not thread.is_alive(), "the thread did not finish"
        if "error" in box:
            raise box["error"]
        return box.get("result")

    return join


def wait(event):
    assert event.wait(WAIT), "the other thread never reached its step"


# ------------------------------------------------------------------ grad mode
@pytest.mark.parametrize("mode", ["no_grad", "set_grad_enabled", "inference_mode"])
def test_no_grad_in_a_thread_leaves_the_main_thread_recording(mode):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    inside, done = threading.Event(), threading.Event()

    def worker():
        modes = {"no_grad": tg.no_grad, "inference_mode": tg.inference_mode}
        with modes.get(mode, lambda: tg.set_grad_enabled(False))():
            y = x * 2
            inside.set()
            wait(done)  # the main thread records a graph while this one is in no_grad
            z = x * 3
        return tg.is_grad_enabled(), y.requires_grad, z.requires_grad

    join = in_thread(worker)
    wait(inside)
    assert tg.is_grad_enabled()
    y = x * 2
    done.set()
    assert join() == (True, False, False)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_new_thread_starts_with_grad_enabled():
    x = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        join = in_thread(lambda: (tg.is_grad_enabled(), (x * 2).requires_grad))
        assert join() == (True, True)
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()


def test_enable_grad_in_a_thread_does_not_reach_no_grad_elsewhere():
    x = tg.tensor([1.0], requires_grad=True)
    inside, done = threading.Event(), threading.Event()

    def worker():
        with tg.no_grad(), tg.enable_grad():
            inside.set()
            wait(done)
            return tg.is_grad_enabled()

    with tg.no_grad():
        join = in_thread(worker)
        wait(inside)
        assert not tg.is_grad_enabled() and not (x * 2).requires_grad
        done.set()
        assert join() is True
    assert tg.is_grad_enabled()


@pytest.mark.reference
def test_grad_mode_per_thread_as_pytorch():
    """The same interleaving in both libraries: what each thread sees."""
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        inside, done = threading.Event(), threading.Event()

        def worker(lib=lib, inside=inside, done=done):
            seen = [lib.is_grad_enabled()]
            with lib.set_grad_enabled(False):
                inside.set()
                wait(done)
                seen.append(lib.is_grad_enabled())
            return seen + [lib.is_grad_enabled()]

        with lib.no_grad():
            join = in_thread(worker)
            wait(inside)
            main = [lib.is_grad_enabled()]
            done.set()
            assert join() == [True, False, True], lib.__name__
        assert main == [False] and lib.is_grad_enabled(), lib.__name__


def test_set_grad_enabled_as_a_call_a_context_and_a_decorator():
    x = tg.tensor([1.0], requires_grad=True)
    try:
        tg.set_grad_enabled(False)  # a call: lasts until changed
        assert not tg.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        tg.set_grad_enabled(True)
    assert tg.is_grad_enabled()
    with tg.no_grad():
        with tg.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not tg.is_grad_enabled()

    @tg.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert not f(x).requires_grad and tg.is_grad_enabled()


# ------------------------------------------------------------------ callbacks of a backward pass
def test_a_backward_in_another_thread_keeps_this_pass_callbacks():
    """A hook of this thread's backward queues a callback, then another thread runs a whole
    backward of its own: the callback still runs, once, at the end of this pass (it was dropped)."""
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    u = tg.tensor([3.0], requires_grad=True)
    ran = []

    def other_backward():
        (u * 5).sum().backward()
        return u.grad.tolist()

    def hook(g):
        tg.autograd.queue_callback(lambda: ran.append(("main", threading.current_thread() is main, x.grad.tolist())))
        assert in_thread(other_backward)() == [5.0]  # a whole backward pass, in between

    main = threading.current_thread()
    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    assert ran == [("main", True, [2.0, 2.0])]


def test_callbacks_run_at_the_end_of_the_pass_that_queued_them():
    """Two threads' passes overlap; each callback runs at the end of its own pass, in its thread."""
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    queued, finish = threading.Event(), threading.Event()
    ran = []

    def other():
        def hook(g):
            tg.autograd.queue_callback(lambda: ran.append(("other", threading.current_thread().name)))
            queued.set()
            wait(finish)  # the main thread runs its whole pass meanwhile

        y = b * 2
        y.register_hook(hook)
        y.sum().backward()

    join = in_thread(other)
    wait(queued)
    z = a * 3
    z.register_hook(lambda g: tg.autograd.queue_callback(lambda: ran.append(("main", threading.current_thread().name))))
    z.sum().backward()
    assert ran == [("main", threading.current_thread().name)]
    finish.set()
    join()
    assert [who for who, _ in ran] == ["main", "other"] and ran[1][1] != ran[0][1]


def test_a_callback_of_a_backward_that_raised_does_not_run_later():
    x = tg.tensor([1.0], requires_grad=True)
    ran = []

    def hook(g):
        tg.autograd.queue_callback(lambda: ran.append("stale"))
        raise ValueError("hook failed")

    y = x * 2
    y.register_hook(hook)
    with pytest.raises(ValueError, match="hook failed"):
        y.sum().backward()
    (x * 3).sum().backward()
    assert ran == []


@pytest.mark.reference
def test_queue_callback_outside_backward_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    message = "Final callbacks can only be installed during backward pass."
    with pytest.raises(RuntimeError, match=message):
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    with pytest.raises(RuntimeError, match=message):
        tg.autograd.queue_callback(lambda: None)


# ------------------------------------------------------------------ the profiler
def test_a_profile_times_only_its_own_thread():
    x = tg.tensor([1.0, 2.0])
    opened, done = threading.Event(), threading.Event()

    def worker():
        wait(opened)
        with tg.profiler.profile() as theirs:  # a second profile, in another thread: allowed
            x.exp()
        done.set()
        return {name for name, *_ in theirs.rows()}

    join = in_thread(worker)
    with tg.profiler.profile() as prof:
        x.sin()
        opened.set()
        wait(done)
    assert join() == {"Exp"}
    assert {name for name, *_ in prof.rows()} == {"Sin"}


# ------------------------------------------------------------------ process-wide, as PyTorch
@pytest.mark.reference
def test_anomaly_mode_is_process_wide_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        with lib.autograd.set_detect_anomaly(True):
            assert in_thread(lib.is_anomaly_enabled)() is True, lib.__name__
        assert in_thread(lib.is_anomaly_enabled)() is False, lib.__name__



@pytest.mark.parametrize("library", ["tensorgrad", "torch"])
def test_inference_mode_as_pytorch(library):
    """inference_mode() turns grad mode off, inference_mode(False) on (PyTorch's guard sets grad mode
    to `not mode`); both as a context manager and a decorator, restoring the previous modes.  The
    same lines run on PyTorch, the contract."""
    lib = tg if library == "tensorgrad" else pytest.importorskip("torch")
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        assert not (x * 2).requires_grad
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
            assert (x * 2).requires_grad
        assert lib.is_inference_mode_enabled()
    assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
    f = lib.inference_mode()(lambda: (lib.is_inference_mode_enabled(), (x * 2).requires_grad))
    assert f() == (True, False) and lib.is_grad_enabled()


@pytest.mark.parametrize("library", ["tensorgrad", "torch"])
def test_grad_modes_decorate_bare_and_hold_inside_generators(library):
    """@no_grad, @enable_grad and @inference_mode without parentheses decorate (PyTorch's); on a
    generator function the mode holds each time the generator runs, and not between."""
    lib = tg if library == "tensorgrad" else pytest.importorskip("torch")

    @lib.no_grad
    def off():
        return lib.is_grad_enabled()

    @lib.inference_mode
    def inference():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    @lib.no_grad()
    def steps():
        got = yield lib.is_grad_enabled()
        yield got, lib.is_grad_enabled()

    assert off() is False and inference() == (True, False)
    with lib.no_grad():
        assert (lib.enable_grad(lambda: lib.is_grad_enabled()))() is True
    it = steps()
    assert next(it) is False and lib.is_grad_enabled()
    assert it.send("sent") == ("sent", False) and lib.is_grad_enabled()
