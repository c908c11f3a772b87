"""PyTorch's OpInfo database as tensorgrad's conformance harness (tests/test_opinfo.py, tools/opinfo_report.py).

PyTorch ships, for each operator, the inputs its own test suite runs
(`torch.testing._internal.common_methods_invocations.op_db`: `sample_inputs`, `reference_inputs`,
`error_inputs`).  This module maps every OpInfo whose name tensorgrad spells to a call on tensorgrad,
runs each sample on PyTorch and on tensorgrad, and classifies the result:

    pass              same forward (values, shape, dtype) and the same input gradients
    wrong             a silently wrong answer: forward value/shape/dtype, or a gradient
    raises            tensorgrad raises (or warns: a RuntimeWarning is an error in the suite) where PyTorch answers
    accepts-invalid   an input PyTorch refuses (an error_input) that tensorgrad accepts

Gradients are those of sum_k (out_k * W_k).sum() over the floating outputs, W_k a random cotangent
(the same for both libraries).  Paths: the fused kernels ("kernels", the default), the reference ops
("reference", inside `tg.kernels.reference()`), and the strict CuPy-like device ("strict").

A case is named (op, dtype, sample, path): op is the OpInfo name, with ".variant" when it has a
variant_test_name; sample is "s<i>" (the i-th of sample_inputs), "r<i>" (reference_inputs) or "e<i>"
(error_inputs), i counted in the op's sample list drawn right after torch.manual_seed(SEED), which makes
the list (and the ids) the same in every run and every process.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import re
import sys
import types
import unittest
import warnings
from dataclasses import dataclass
from pathlib import Path

import hypothesis_profiles
import numpy as np
import torch

import tensorgrad as tg
import tensorgrad.nn.functional as F

SEED = 0
CLASSES = ("wrong", "raises", "accepts-invalid")  # the non-pass classes
PATHS = ("kernels", "reference", "strict")
EXPECTED_FILE = Path(__file__).with_name("opinfo_expected_failures.txt")

# Samples per op and path.  The cap keeps tests/test_opinfo.py within the suite's time budget; the
# first MAX_SAMPLES of the (deterministic) list are run, so raising a cap only adds cases.
MAX_SAMPLES = {"float64": 40, "float32": 15, "int64": 40}
# reference_inputs (the slow test): all of them (up to GENERATED), since the extremal values (nan, inf,
# -0.0, huge and tiny) come after the shapes, at index 30 to 120 of most ops' lists.
MAX_REFERENCE_SAMPLES = 400
MAX_ERROR_SAMPLES = 40  # all of every mapped op's error_inputs
# Samples drawn before sorting: every cap, and every mapped op's whole list but max_pool2d's (whose
# first GENERATED are drawn, in the generator's own deterministic order).
GENERATED = 400

# Paths each dtype runs on: every path, float32 on fewer samples (MAX_SAMPLES).
DTYPE_PATHS = {"float64": PATHS, "float32": PATHS, "int64": PATHS}

# Tolerances (rtol, atol).  float64: both libraries evaluate the same formulas and differ only in
# summation order and in the libm/BLAS routines behind them, i.e. by a few ulps amplified by the
# cancellation a sample's sums have: torch.testing's float64 defaults (1e-7, 1e-7) allow exactly that.
# float32: torch.testing's float32 defaults (1.3e-6, 1e-5), for the same reason at float32's precision.
# Gradients get 10x the forward tolerance: a backward is one more reduction (the sum over the
# broadcast or reduced axes) in whatever order each library picks.
TOLERANCES = {"float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5)}
GRAD_FACTOR = 10

# Ops whose result is random: only the shape and dtype of the forward are compared (no values, no
# gradients: the two libraries draw from different generators).
# empty_like and new_empty are here too: their values are unspecified (PyTorch's are whatever memory held).
RANDOM_OPS = {
    "randn", "randint", "multinomial", "nn.functional.dropout", "empty", "normal", "randperm", "rand", "empty_like",
    "new_empty",
}  # fmt: skip
RANDOM_OPS |= {f"nn.functional.{n}" for n in ("dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")}


def is_random(info, sample) -> bool:
    """Whether the sample's result is random (attention with dropout_p > 0 too, rrelu in training)."""
    training_rrelu = info.name == "nn.functional.rrelu" and bool(sample.kwargs.get("training", False))
    return info.name in RANDOM_OPS or bool(sample.kwargs.get("dropout_p", 0)) or training_rrelu


# Names tensorgrad spells with a Python operator instead of a function or method.
OPERATOR_ALIASES = {
    "neg": operator.neg,
    "positive": operator.pos,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "bitwise_and": operator.and_,
    "bitwise_or": operator.or_,
    "bitwise_not": operator.invert,
}
# OpInfo names of reflected operators whose Python 3 name differs.
DUNDER_ALIASES = {"__rdiv__": "__rtruediv__"}


def _call_method(name):
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


# OpInfos whose `op` is a lambda that reorders its arguments: the same reordering on tensorgrad.
ADAPTERS = {
    "where": lambda self, condition, other, **kw: tg.where(condition, self, other, **kw),
    "einsum": lambda tensors, equation: tg.einsum(equation, *tensors),
    "T": lambda x: x.T,
    "zero_": lambda x: x.clone().zero_(),
    "nn.functional.embedding": lambda weight, idx, **kw: F.embedding(idx, weight, **kw),
    "nn.functional.embedding_bag": lambda weight, idx, **kw: F.embedding_bag(idx, weight, **kw),
    "special.polygamma": lambda x, n, **kw: tg.special.polygamma(n, x, **kw),
    "linalg.pinv.singular": lambda a, b, **kw: tg.linalg.pinv(a @ b.mT, **kw),  # op id: a variant's own lambda
    "linalg.lstsq.grad_oriented": lambda a, b, driver: tg.linalg.lstsq(a, b, driver=driver)[:2],
}


def load_op_db():
    """PyTorch's op_db (importing it takes a few seconds).

    common_utils imports `expecttest` (a PyTorch test-suite dependency we do not otherwise need) for
    its TestCase base class; without it installed, a stand-in with unittest's TestCase is enough to
    import the database."""
    try:
        import expecttest  # noqa: F401
    except ModuleNotFoundError:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        stub.ACCEPT = False
        sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db

    hypothesis_profiles.load()  # PyTorch's test utilities load a hypothesis profile of their own on import
    return op_db


def op_id(info) -> str:
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


# OpInfo variants that test another spelling than their name's: Tensor.normal_ for normal.in_place.
VARIANT_ADAPTERS = {
    "normal.in_place": (lambda x, *args, **kw: x.clone().normal_(*args, **kw), "Tensor.normal_"),
}


def tensorgrad_callable(info):
    """How tensorgrad spells this OpInfo, as (call, description), or None where it has no such name."""
    name = info.name
    if op_id(info) in VARIANT_ADAPTERS:
        return VARIANT_ADAPTERS[op_id(info)]
    for key in (op_id(info), name):
        if key in ADAPTERS:
            return ADAPTERS[key], f"adapted {key}"
    if name.startswith("nn.functional."):
        fname = name[len("nn.functional.") :]
        fn = getattr(F, fname, None)
        return (fn, f"F.{fname}") if _is_function(fn) else None
    if "." in name:  # special.X, linalg.X, fft.X: tg.special.X, tg.linalg.X, tg.fft.X
        namespace, fname = name.rsplit(".", 1)
        module = getattr(tg, namespace, None)
        fn = getattr(module, fname, None) if isinstance(module, types.ModuleType) else None
        return (fn, f"tg.{name}") if _is_function(fn) else None
    if name in OPERATOR_ALIASES:
        return OPERATOR_ALIASES[name], f"operator {OPERATOR_ALIASES[name].__name__}"
    if name.startswith("__"):
        dunder = DUNDER_ALIASES.get(name, name)
        return (_call_method(dunder), f"Tensor.{dunder}") if _tensor_attr(dunder) is not None else None
    if info.op is getattr(torch, name, None) and _is_function(getattr(tg, name, None)):
        return getattr(tg, name), f"tg.{name}"
    attr = _tensor_attr(name)
    if isinstance(attr, property):
        return (lambda x: getattr(x, name)), f"Tensor.{name}"
    if callable(attr):
        return _call_method(name), f"Tensor.{name}"
    if _is_function(getattr(tg, name, None)):
        return getattr(tg, name), f"tg.{name}"
    return None


def _tensor_attr(name):
    """Tensor's own attribute `name` (from its classes, not from `type`: `type.__ror__` spells `int | None`)."""
    for klass in tg.Tensor.__mro__:
        if klass is not object and name in vars(klass):
            return vars(klass)[name]
    return None


def operator_spelled(info) -> bool:
    """Whether tensorgrad spells the op with a Python operator or a dunder method."""
    return info.name in OPERATOR_ALIASES or info.name.startswith("__")


def _is_function(obj) -> bool:
    return isinstance(obj, types.FunctionType | types.BuiltinFunctionType)


def mapped_ops(op_db):
    """[(op_id, info, call, description)] for the OpInfos tensorgrad spells, in op_db order."""
    out = []
    for info in op_db:
        found = tensorgrad_callable(info)
        if found is not None:
            out.append((op_id(info), info, *found))
    return out


# ------------------------------------------------------------------ samples
def samples(info, kind: str, dtype: str):
    """The op's first samples of `kind` ("s", "r", "e") in canonical order (see `_structure`)."""
    torch.manual_seed(SEED)
    tdtype = getattr(torch, dtype)
    grad = bool(info.supports_autograd)
    if kind == "s":
        it, cap = info.sample_inputs("cpu", tdtype, requires_grad=grad), MAX_SAMPLES[dtype]
    elif kind == "r":
        it, cap = info.reference_inputs("cpu", tdtype, requires_grad=grad), MAX_REFERENCE_SAMPLES
    elif info.error_inputs_func is None:
        return []
    else:
        it, cap = info.error_inputs("cpu"), MAX_ERROR_SAMPLES
    drawn, failure = [], None
    try:
        for sample in itertools.islice(it, GENERATED):
            drawn.append(sample)
    except Exception as e:  # PyTorch's generator itself fails part-way: the samples before it still run
        failure = GeneratorFailure(_short(e))
    drawn.sort(key=lambda s: _structure(s.sample_input if kind == "e" else s))
    out = drawn[:cap] + ([failure] if failure else [])
    _SAMPLE_COUNTS[(op_id(info), kind, dtype)] = len(out)
    return out


_SAMPLE_COUNTS: dict = {}  # (op id, kind, dtype) -> len(samples(...)), as drawn in this process


def sample_count(info, kind: str, dtype: str) -> int:
    """len(samples(info, kind, dtype)), without drawing them again where this process already has
    (tools/supported_ops.py counts the cases the tests ran: drawing PyTorch's samples is most of its time)."""
    key = (op_id(info), kind, dtype)
    return _SAMPLE_COUNTS[key] if key in _SAMPLE_COUNTS else len(samples(info, kind, dtype))


def _structure(sample) -> str:
    """A sample's shape-level description (tensors as shape, dtype, requires_grad; no values).

    The ids count samples in this order (a stable sort, so equal descriptions keep the order they were
    drawn in): a few generators iterate a Python set (meshgrid's {'xy', 'ij'}), whose order changes
    with PYTHONHASHSEED, i.e. from one process (or xdist worker) to the next."""

    def desc(v):
        if isinstance(v, torch.Tensor):
            return f"T{tuple(v.shape)}{v.dtype}{'g' if v.requires_grad else ''}{'' if v.is_contiguous() else 'nc'}"
        if isinstance(v, list | tuple):
            return type(v).__name__[0] + "[" + ",".join(desc(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{desc(x)}" for k, x in sorted(v.items())) + "}"
        return re.sub(r" at 0x[0-9a-f]+", "", repr(v))

    return desc((sample.input, sample.args, sample.kwargs))


@dataclass
class GeneratorFailure:
    """Stands in for the samples PyTorch's own generator failed to make (reported as n/a)."""

    error: str


def _torch_dtype_to_tg(d):
    return getattr(tg, str(d).removeprefix("torch."), d)


class _Converter:
    """SampleInput values -> tensorgrad values (tensors, dtypes, devices), the same torch tensor to the
    same tensorgrad tensor; and the fresh torch leaves PyTorch's side runs on."""

    def __init__(self, device: str):
        self.device = device
        self.memo: dict[int, object] = {}

    def tg(self, v):
        if isinstance(v, torch.Tensor):
            if id(v) not in self.memo:
                data = v.detach().cpu().resolve_conj().resolve_neg().numpy()
                grad = v.requires_grad and (v.is_floating_point() or v.is_complex())
                self.memo[id(v)] = tg.tensor(data, device=self.device, requires_grad=grad)
            return self.memo[id(v)]
        if isinstance(v, torch.dtype):
            return _torch_dtype_to_tg(v)
        if isinstance(v, torch.memory_format):  # torch.channels_last -> tg.channels_last
            return getattr(tg, str(v).removeprefix("torch."))
        if isinstance(v, torch.device) or (isinstance(v, str) and v == "cpu"):
            return self.device
        if isinstance(v, torch.Size):
            return tuple(v)
        if isinstance(v, list):
            return [self.tg(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self.tg(x) for x in v)
        if isinstance(v, dict):
            return {k: self.tg(x) for k, x in v.items()}
        return v


def _torch_leaves(v, memo):
    """The sample with every tensor replaced by a fresh leaf (same data, same requires_grad)."""
    if isinstance(v, torch.Tensor):
        if id(v) not in memo:
            memo[id(v)] = v.detach().clone().requires_grad_(v.requires_grad)
        return memo[id(v)]
    if isinstance(v, list):
        return [_torch_leaves(x, memo) for x in v]
    if isinstance(v, tuple):
        return tuple(_torch_leaves(x, memo) for x in v)
    if isinstance(v, dict):
        return {k: _torch_leaves(x, memo) for k, x in v.items()}
    return v


def _flatten(out):
    if isinstance(out, list | tuple):
        return [y for x in out for y in _flatten(x)]
    return [out]


# ------------------------------------------------------------------ one case
@dataclass
class Reference:
    """PyTorch's answer to one sample: outputs, cotangents and input gradients (or the error)."""

    outs: list | None = None
    cotangents: list | None = None
    grads: list | None = None  # per leaf in the memo order; None where unused
    error: str | None = None
    backward_error: str | None = None  # PyTorch's own backward raised


def torch_reference(info, sample, sample_key: str) -> tuple[Reference, list, dict]:
    memo: dict = {}
    inp = _torch_leaves(sample.input, memo)
    args = _torch_leaves(sample.args, memo)
    kwargs = _torch_leaves(sample.kwargs, memo)
    leaves = [t for t in memo.values() if t.requires_grad]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's notes on the sample (deprecations, broadcasting)
            out = info.op(inp, *args, **kwargs)
    except Exception as e:  # PyTorch refuses this sample: tensorgrad must refuse it too
        return Reference(error=_short(e)), [], memo
    outs = _flatten(out)
    ref = Reference(outs=[o.detach() if isinstance(o, torch.Tensor) else o for o in outs])
    if is_random(info, sample) or not leaves:
        return ref, leaves, memo
    gen = torch.Generator().manual_seed(_stable_hash(sample_key))
    grad_outs = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
    ref.cotangents = [
        torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype) if o.requires_grad else None
        for o in outs
        if isinstance(o, torch.Tensor)
    ]
    if grad_outs:
        loss = sum((o * w).sum() for o, w in zip(_tensors(outs), ref.cotangents) if w is not None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref.grads = list(torch.autograd.grad(loss, leaves, allow_unused=True))
        except Exception as e:  # no reference gradient: the sample is reported n/a
            ref.backward_error = _short(e)
    return ref, leaves, memo


def _tensors(outs):
    return [o for o in outs if isinstance(o, torch.Tensor)]


def _stable_hash(text: str) -> int:
    return sum(ord(c) * 31**i for i, c in enumerate(text)) % (2**31)


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ")
    text = re.sub(r"\s+", " ", text)
    return text[:110]


def run_tensorgrad(call, sample, path: str, memo_torch: dict):
    """(outputs, {id(torch leaf): tensorgrad leaf}, warning text or None); raises what tensorgrad raises."""
    device = "strict" if path == "strict" else "cpu"
    _drain_deferred_checks()
    conv = _Converter(device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inp = conv.tg(sample.input)
        args = conv.tg(sample.args)
        kwargs = conv.tg(sample.kwargs)
        if path == "reference":
            with tg.kernels.reference():
                out = call(inp, *args, **kwargs)
        else:
            out = call(inp, *args, **kwargs)
        for o in _flatten(out):  # reading a value raises the device checks the op deferred
            if isinstance(o, tg.Tensor):
                o.numpy()
    warned = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    return out, conv.memo, (str(warned[0].message) if warned else None)


def _drain_deferred_checks():
    """Raise-and-forget the device checks an earlier case left queued (read at the next .numpy()),
    so that one case's error never surfaces in the next."""
    try:
        tg.zeros(1, device="strict").numpy()
    except Exception:
        pass


def _host(x):
    if isinstance(x, tg.Tensor):
        return x.numpy()
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():  # PyTorch's gradient of sgn: a zero tensor with no storage to read
            return np.zeros(tuple(x.shape), dtype=str(x.dtype).removeprefix("torch."))
        return x.detach().numpy()
    return np.asarray(x)


def _compare(ours, theirs, tol, exact=None) -> str | None:
    """None when close (to `theirs`, or to `exact` where given), else what differs in a few words."""
    problem = _compare_one(ours, theirs, tol)
    if problem and exact is not None and isinstance(theirs, torch.Tensor) and isinstance(exact, torch.Tensor):
        if _compare_one(ours, exact.to(theirs.dtype), tol) is None:
            return None
    return problem


def _compare_one(ours, theirs, tol) -> str | None:
    if isinstance(theirs, torch.Tensor) and not isinstance(ours, tg.Tensor):
        return f"returns {type(ours).__name__}, torch a tensor"
    if not isinstance(theirs, torch.Tensor) and isinstance(ours, tg.Tensor):
        return f"returns a tensor, torch {type(theirs).__name__}"
    a, e = _host(ours), _host(theirs)
    if a.dtype.kind not in "biufc":
        return f"returns {type(ours).__name__} {str(ours)[:30]}, torch {type(theirs).__name__}"
    if a.shape != e.shape:
        return f"shape {a.shape} vs torch {e.shape}"
    if isinstance(theirs, torch.Tensor) and str(a.dtype) != str(theirs.dtype).removeprefix("torch."):
        if not (a.dtype == np.bool_ and theirs.dtype == torch.bool):
            return f"dtype {a.dtype} vs torch {str(theirs.dtype).removeprefix('torch.')}"
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        bad = a != e
    else:
        rtol, atol = tol
        a64, e64 = (
            a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
            e.astype(np.complex128 if e.dtype.kind == "c" else np.float64),
        )
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~(np.abs(a64 - e64) <= atol + rtol * np.abs(e64))
            bad &= a64 != e64  # equal infinities
            bad &= ~(np.isnan(a64) & np.isnan(e64))  # NaN where torch gives NaN
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(bad) else ()
        n = f"{int(np.sum(bad))} of {np.size(bad)}"
        return f"{n} values differ, e.g. at {where}: {a[where].item()!r} vs torch {e[where].item()!r}"
    return None


def run_case(info, call, sample, path: str, dtype: str, sample_key: str, reference=None, exact=None):
    """(class, reason) of one sample on one path; class is "pass" or one of CLASSES.

    `exact`: PyTorch's float64 answer on the same (float32) inputs, for float32 samples: a float32
    result passes when it is close to PyTorch's float32 result or to this one (PyTorch's own float32
    rounding is no standard: a cancellation it leaves, e.g. 2**-12 for an exact 0, is its error)."""
    ref, leaves, memo = reference or torch_reference(info, sample, sample_key)
    rtol, atol = TOLERANCES.get(dtype, TOLERANCES["float64"])
    try:
        out, tg_memo, warned = run_tensorgrad(call, sample, path, memo)
    except Exception as e:
        if ref.error is not None:
            return "pass", ""
        return "raises", _short(e)
    if ref.error is not None:
        return "accepts-invalid", f"torch: {ref.error[:60]}"
    ours = _flatten(out)
    if len(ours) != len(ref.outs):
        return "wrong", f"{len(ours)} outputs vs torch {len(ref.outs)}"
    random_op = is_random(info, sample)
    for k, (o, t) in enumerate(zip(ours, ref.outs)):
        if random_op:
            problem = _compare_meta(o, t)
        else:
            problem = _compare(o, t, (rtol, atol), exact=exact.outs[k] if exact else None)
        if problem:
            return "wrong", f"output {k}: {problem}"
    if ref.grads is not None:
        grad_tol = (rtol * GRAD_FACTOR, atol * GRAD_FACTOR)
        problem = _compare_grads(ours, ref, leaves, memo, tg_memo, path, grad_tol, exact)
        if problem:
            return ("raises" if problem.startswith(("backward raises", "backward warns")) else "wrong"), problem[:110]
    if warned:
        return "raises", f"RuntimeWarning: {warned}"[:110]
    return "pass", ""


def _compare_meta(o, t):
    if isinstance(t, torch.Tensor):
        if not isinstance(o, tg.Tensor):
            return f"returns {type(o).__name__}, torch a tensor"
        if tuple(o.shape) != tuple(t.shape):
            return f"shape {tuple(o.shape)} vs torch {tuple(t.shape)}"
        if str(o.dtype) != str(t.dtype).removeprefix("torch."):
            return f"dtype {o.dtype} vs torch {t.dtype}"
    return None


def _compare_grads(ours, ref, leaves, memo, tg_memo, path, tol, exact=None):
    tensors = [o for o in ours if isinstance(o, tg.Tensor)]
    theirs = _tensors(ref.outs)
    if len(tensors) != len(theirs):
        return "outputs: tensors vs non-tensors differ"
    for k, (o, w) in enumerate(zip(tensors, ref.cotangents)):
        if w is not None and not o.requires_grad:
            return f"output {k} does not require grad (torch's does)"
    context = tg.kernels.reference if path == "reference" else contextlib.nullcontext
    try:
        with context():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the loss is the harness's, not the op's: inf * w may warn
                loss = None
                for o, w in zip(tensors, ref.cotangents):
                    if w is not None:
                        term = (o * tg.tensor(w.numpy(), dtype=o.dtype, device=o.device)).sum()
                        loss = term if loss is None else loss + term
            if loss is None:
                return None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                loss.backward()
                for leaf in tg_memo.values():  # reading a value raises the device checks backward deferred
                    if isinstance(leaf, tg.Tensor) and leaf.grad is not None:
                        leaf.grad.numpy()
    except Exception as e:
        return f"backward raises {_short(e)}"
    by_id = {id(v): k for k, v in memo.items()}
    for i, (leaf, g) in enumerate(zip(leaves, ref.grads)):
        ours_leaf = tg_memo.get(by_id.get(id(leaf)))
        if ours_leaf is None:
            continue
        got = ours_leaf.grad
        if got is None:
            if g is None or not torch.any(g != 0):
                continue
            return f"gradient of input {i}: None, torch nonzero"
        want = g if g is not None else torch.zeros(leaf.shape, dtype=leaf.dtype)
        exact_g = exact.grads[i] if exact is not None and exact.grads is not None else None
        problem = _compare(got, want, tol, exact=exact_g)
        if problem:
            return f"gradient of input {i}: {problem}"
    warned = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if warned:
        return f"backward warns RuntimeWarning: {warned[0].message}"
    return None


NON_TENSOR_SELF = "a Python operator with a non-tensor self (Python's operator protocol decides, not the op)"


def error_input_applies(info, error_input) -> str | None:
    """None where the error_input is one tensorgrad must refuse, else why it does not apply:
    PyTorch's op itself accepts it, or the op is a Python operator on tensorgrad and the sample's
    `self` is not a tensor (Python's operator protocol, not the op, decides what `3 == x` does)."""
    sample = error_input.sample_input
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's own warnings about the invalid input
            info.op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        pass
    else:
        return "PyTorch's op accepts it"
    if operator_spelled(info) and not isinstance(sample.input, torch.Tensor):
        return NON_TENSOR_SELF
    return None


def run_error_case(call, error_input, path: str) -> tuple[str, str]:
    """An error_input must raise on tensorgrad (any exception, for now)."""
    sample = error_input.sample_input
    try:
        run_tensorgrad(call, sample, path, {})
    except Exception:
        return "pass", ""
    refusal = f"{error_input.error_type.__name__}: {error_input.error_regex}".rstrip(": ")
    return "accepts-invalid", f"{_structure(sample)[:50]}; torch: {refusal}"[:110]


# ------------------------------------------------------------------ whole ops
def run_op(info, call, kinds=("s",), dtypes=("float64", "float32")):
    """{(op_id, dtype, sample, path): (class, reason)} for every case of the op (passes included).

    kinds: "s" sample_inputs, "r" reference_inputs, "e" error_inputs, "g" the second derivative of
    the float64 sample_inputs (`run_op_gradgrad`)."""
    oid = op_id(info)
    results = {}
    dtypes = _dtypes_run(info, dtypes)
    for kind in kinds:
        if kind == "g":  # second order: float64 sample_inputs (run_op_gradgrad)
            results.update(run_op_gradgrad(info, call))
            continue
        if kind == "e":
            for i, err in enumerate(samples(info, "e", "float64")):
                why_not = f"PyTorch's generator raises {err.error}" if isinstance(err, GeneratorFailure) else None
                why_not = why_not or error_input_applies(info, err)
                if why_not:
                    results[(oid, "any", f"e{i}", "-")] = ("n/a", why_not)
                    continue
                for path in PATHS:
                    results[(oid, "any", f"e{i}", path)] = run_error_case(call, err, path)
            continue
        for dtype in dtypes:
            if kind == "r" and dtype == "float32":
                continue
            for i, sample in enumerate(samples(info, kind, dtype)):
                if isinstance(sample, GeneratorFailure):
                    results[(oid, dtype, f"{kind}{i}", "-")] = ("n/a", f"PyTorch's generator raises {sample.error}")
                    continue
                if operator_spelled(info) and not isinstance(sample.input, torch.Tensor):
                    results[(oid, dtype, f"{kind}{i}", "-")] = ("n/a", NON_TENSOR_SELF)
                    continue
                key = f"{oid}/{dtype}/{kind}{i}"
                reference = torch_reference(info, sample, key)
                if reference[0].backward_error:
                    why = f"PyTorch's backward raises {reference[0].backward_error}"
                    results[(oid, dtype, f"{kind}{i}", "-")] = ("n/a", why)
                    continue
                exact = _exact_reference(info, sample, key) if dtype == "float32" else None
                for path in DTYPE_PATHS[dtype]:
                    results[(oid, dtype, f"{kind}{i}", path)] = run_case(
                        info, call, sample, path, dtype, key, reference, exact
                    )
    return results


def _exact_reference(info, sample, key):
    """PyTorch's answer in float64 on the same inputs (a float32 sample's floating tensors upcast)."""

    def upcast(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            return t.detach().double().requires_grad_(t.requires_grad)
        return torch.float64 if t == torch.float32 else t

    up = sample.transform(upcast)
    try:
        ref = torch_reference(info, up, key)[0]
    except Exception:
        return None
    return None if ref.error else ref


def _dtypes_run(info, dtypes):
    """The requested dtypes the op supports; int64 for an op with no floating dtype (the bitwise ops)."""
    supported = {str(d).removeprefix("torch.") for d in info.supported_dtypes("cpu")}
    run = tuple(d for d in dtypes if d in supported)
    if not run and not any(d.startswith("float") for d in supported) and "int64" in supported:
        return ("int64",)
    return run


# ------------------------------------------------------------------ the expected-failures file
def read_expected(path: Path = EXPECTED_FILE) -> dict:
    """{(op, dtype, sample, path): (class, reason)} from the file (# comments and blank lines skipped);
    a line with path "*" stands for the same case on every path."""
    expected = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split(None, 5)
        if len(fields) < 5 or fields[4] not in CLASSES:
            raise ValueError(f"{path.name}:{n}: expected 'op dtype sample path class reason', got {line!r}")
        for p in PATHS if fields[3] == ALL_PATHS else (fields[3],):
            key = (*fields[:3], p)
            if key in expected:
                raise ValueError(f"{path.name}:{n}: {key} is listed twice")
            expected[key] = (fields[4], fields[5] if len(fields) > 5 else "")
    return expected


ALL_PATHS = "*"
HEADER = """\
# Conformance cases tensorgrad does not pass yet (tests/test_opinfo.py; PyTorch's OpInfo samples).
# Written by `python tools/opinfo_report.py --slow --write-expected`; shrunk by hand as fixes land.
# One line per case: op  dtype  sample  path  class  reason
#   op      the OpInfo name (".variant" for its variant_test_name)
#   dtype   float64 / float32 (int64 for the ops with no floating dtype), any (error_inputs)
#   sample  s<i> sample_inputs, r<i> reference_inputs (the slow test), e<i> error_inputs: the i-th
#           of the op's samples drawn after torch.manual_seed(0), in canonical order
#           (tests/opinfo_harness.py: samples); g<i> the second derivative of sample s<i> (float64)
#   path    kernels (the default), reference (tg.kernels.reference()), strict (the strict device),
#           * (all three, the same class on each)
#   class   wrong (a silently wrong value or gradient), raises (tensorgrad raises, or warns, where
#           PyTorch answers), accepts-invalid (tensorgrad accepts an input PyTorch refuses)
# A case that starts passing (or changes class) fails the test: delete or correct its line.
# This list only shrinks.
"""


def _case_order(key):
    op, dtype, sample, path = key
    return op, dtype, sample[0], int(sample[1:]), PATHS.index(path) if path in PATHS else -1


def format_expected(results: dict) -> str:
    failing = {k: v for k, v in results.items() if v[0] in CLASSES}
    rows = []
    for key in sorted(failing, key=_case_order):
        same = [failing.get((*key[:3], p), ("",))[0] for p in PATHS]
        if same == [failing[key][0]] * len(PATHS):
            if key[3] == PATHS[0]:
                rows.append(((*key[:3], ALL_PATHS), failing[key]))
        else:
            rows.append((key, failing[key]))
    widths = [max([len(k[i]) for k, _ in rows] + [1]) for i in range(4)]
    cls_w = max(len(c) for c in CLASSES)
    lines = [HEADER]
    for key, (cls, reason) in rows:
        cells = [key[i].ljust(widths[i]) for i in range(4)]
        lines.append(f"{'  '.join(cells)}  {cls.ljust(cls_w)}  {reason}".rstrip())
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ second order
# Float64 sample_inputs whose second derivative is compared (the first of the op's canonical list:
# "g<i>" is sample "s<i>" differentiated twice).  The cap keeps the second-order class within the
# suite's time budget; raising it only adds cases.
MAX_GRADGRAD_SAMPLES = 20
# (rtol, atol) of the second derivatives: float64's (TOLERANCES) times GRAD_FACTOR per backward pass,
# i.e. GRAD_FACTOR**2: each pass is one more reduction in whatever order each library sums.
GRADGRAD_TOLERANCE = tuple(t * GRAD_FACTOR**2 for t in TOLERANCES["float64"])
GRADGRAD_PATHS = ("kernels",)


@dataclass
class SecondOrder:
    """PyTorch's second derivative of one sample: the first gradients g = J^T v (create_graph=True),
    then the gradients of sum_k <g_k, w_k> with respect to the inputs and to v."""

    leaves: list
    memo: dict
    outs: list  # the indices (in the flattened outputs) of the differentiated outputs
    v: list  # one cotangent per differentiated output
    w: list  # one per input: None where PyTorch's first gradient is None (unused input)
    first: list  # g, per input (None: unused)
    second: list  # per input, then per v (None: zero)


def torch_second_order(info, sample, sample_key: str) -> SecondOrder | str:
    """PyTorch's SecondOrder, or why the sample has none (a string: the case is n/a)."""
    memo: dict = {}
    inp = _torch_leaves(sample.input, memo)
    args = _torch_leaves(sample.args, memo)
    kwargs = _torch_leaves(sample.kwargs, memo)
    leaves = [t for t in memo.values() if t.requires_grad]
    if not leaves:
        return "no input requires grad"
    gen = torch.Generator().manual_seed(_stable_hash(sample_key + "/gradgrad"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's notes on the sample (deprecations, broadcasting)
            outs = _flatten(sample.output_process_fn_grad(info.op(inp, *args, **kwargs)))
            picked = [k for k, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.requires_grad]
            if not picked:
                return "no output requires grad"
            v = [torch.randn(outs[k].shape, generator=gen, dtype=torch.float64).to(outs[k].dtype) for k in picked]
            v = [t.requires_grad_() for t in v]
            first = torch.autograd.grad([outs[k] for k in picked], leaves, v, create_graph=True, allow_unused=True)
            w = [None if g is None else torch.randn(g.shape, generator=gen, dtype=torch.float64) for g in first]
            diff = [(g, c) for g, c in zip(first, w) if g is not None and g.requires_grad]
            if diff:
                second = torch.autograd.grad(
                    [g for g, _ in diff], leaves + v, [c.to(g.dtype) for g, c in diff], allow_unused=True
                )
            else:
                second = [None] * (len(leaves) + len(v))
    except Exception as e:  # PyTorch refuses the sample, or has no (double) backward for it
        return f"PyTorch raises {_short(e)}"
    return SecondOrder(
        leaves, memo, picked, [t.detach() for t in v], w,
        [None if g is None else g.detach() for g in first], [None if s is None else s.detach() for s in second],
    )  # fmt: skip


def run_gradgrad_case(call, sample, path: str, ref: SecondOrder) -> tuple[str, str]:
    """(class, reason) of one sample's second derivative on one path against PyTorch's."""
    context = tg.kernels.reference if path == "reference" else contextlib.nullcontext
    try:
        out, tg_memo, _ = run_tensorgrad(call, sample, path, ref.memo)
    except Exception as e:  # the first-order class reports the forward too
        return "raises", f"the forward raises {_short(e)}"[:110]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            by_id = {id(v): k for k, v in ref.memo.items()}
            leaves = [tg_memo[by_id[id(leaf)]] for leaf in ref.leaves]
            with context():
                outs = _flatten(sample.output_process_fn_grad(out))
            if max(ref.outs) >= len(outs):
                return "wrong", f"{len(outs)} outputs, torch more"
            picked = [outs[k] for k in ref.outs]
            for k, o in zip(ref.outs, picked):
                if not (isinstance(o, tg.Tensor) and o.requires_grad):
                    return "wrong", f"output {k} does not require grad (torch's does)"
            device = picked[0].device
            v = [tg.tensor(t.numpy(), dtype=o.dtype, device=device, requires_grad=True) for t, o in zip(ref.v, picked)]
            with context():
                first = tg.autograd.grad(picked, leaves, v, create_graph=True, allow_unused=True)
                for i, (g, want) in enumerate(zip(first, ref.first)):
                    problem = _compare_optional(g, want, ref.leaves[i], GRADGRAD_TOLERANCE)
                    if problem:
                        return "wrong", f"first gradient of input {i}: {problem}"[:110]
                diff = [(g, c) for g, c in zip(first, ref.w) if c is not None and g is not None and g.requires_grad]
                if diff:
                    cot = [tg.tensor(c.numpy(), dtype=g.dtype, device=device) for g, c in diff]
                    second = tg.autograd.grad([g for g, _ in diff], leaves + v, cot, allow_unused=True)
                else:
                    second = [None] * (len(leaves) + len(v))
                for s in second:
                    if s is not None:
                        s.numpy()  # reading a value raises the device checks the pass deferred
    except Exception as e:
        return "raises", f"double backward raises {_short(e)}"[:110]
    wrt = [*ref.leaves, *ref.v]
    for i, (s, want) in enumerate(zip(second, ref.second)):
        problem = _compare_optional(s, want, wrt[i], GRADGRAD_TOLERANCE)
        if problem:
            what = f"input {i}" if i < len(ref.leaves) else f"grad_output {i - len(ref.leaves)}"
            return "wrong", f"second derivative wrt {what}: {problem}"[:110]
    warned = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if warned:
        return "raises", f"RuntimeWarning: {warned[0].message}"[:110]
    return "pass", ""


def _compare_optional(ours, theirs, like, tol) -> str | None:
    """_compare, a None gradient on either side standing for zeros of `like`'s shape."""
    if ours is None and theirs is None:
        return None
    if theirs is None:
        theirs = torch.zeros(like.shape, dtype=like.dtype)
    if ours is None:  # zeros, within the tolerance (a formula's exact 0 is PyTorch's x/x - x/x, say)
        zeros = tg.tensor(np.zeros(tuple(theirs.shape), dtype=str(theirs.dtype).removeprefix("torch.")))
        problem = _compare(zeros, theirs, tol)
        return problem and f"None, torch nonzero: {problem}"
    return _compare(ours, theirs, tol)


def supports_gradgrad(info) -> bool:
    """Whether PyTorch's OpInfo says the op has a second derivative (and a first), in float64; the
    ops whose result is random (RANDOM_OPS) left out, as their values cannot be compared."""
    float64 = any(str(d) == "torch.float64" for d in info.supported_dtypes("cpu"))
    return bool(info.supports_autograd and info.supports_gradgrad) and float64 and info.name not in RANDOM_OPS


def run_op_gradgrad(info, call, paths=GRADGRAD_PATHS):
    """{(op_id, "float64", "g<i>", path): (class, reason)} for the op's second-order cases."""
    oid = op_id(info)
    results = {}
    if not supports_gradgrad(info):
        return results
    for i, sample in enumerate(samples(info, "s", "float64")[:MAX_GRADGRAD_SAMPLES]):
        key = (oid, "float64", f"g{i}", "-")
        if isinstance(sample, GeneratorFailure):
            results[key] = ("n/a", f"PyTorch's generator raises {sample.error}")
            continue
        if operator_spelled(info) and not isinstance(sample.input, torch.Tensor):
            results[key] = ("n/a", NON_TENSOR_SELF)
            continue
        if is_random(info, sample):
            results[key] = ("n/a", "a random result")
            continue
        ref = torch_second_order(info, sample, f"{oid}/float64/s{i}")
        if isinstance(ref, str):
            results[key] = ("n/a", ref)
            continue
        for path in paths:
            results[(oid, "float64", f"g{i}", path)] = run_gradgrad_case(call, sample, path, ref)
    return results
