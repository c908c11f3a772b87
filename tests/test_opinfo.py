"""Conformance with PyTorch's own per-op test inputs (OpInfo), every mapped op on every path.

For each OpInfo of `torch.testing._internal.common_methods_invocations.op_db` whose name tensorgrad
spells (`tg.X`, `Tensor.X`, `F.X` for `nn.functional.X`, the Python operators), the first samples of
`sample_inputs` (float64 and float32) run on PyTorch and on tensorgrad's three paths (the fused kernels,
the reference ops, the strict device): forward values, shapes and dtypes, and the input gradients of
sum((out * W)) for a random cotangent W.  Every `error_input` must raise.  The harness is
tests/opinfo_harness.py; `python tools/opinfo_report.py` prints the counts and the per-op table.

The second-order class (`test_opinfo_second_order`) takes the ops whose OpInfo says
`supports_gradgrad` and, for each float64 sample (the first MAX_GRADGRAD_SAMPLES of the op's list,
case "g<i>" for sample "s<i>", on the kernels path: the Tensor-level formulas are shared by the
paths, and the first-order class already runs the forwards on all three), compares tensorgrad's
second derivative with PyTorch's: y = op(sample) (through the sample's output_process_fn_grad, as
PyTorch's own gradgrad test), a seeded cotangent v, g = grad(y, inputs, v, create_graph=True),
a seeded w, then grad(g, inputs + v, w) (a Hessian-vector product and the first backward's
linearity in v), values and first gradients alike.

A case that does not pass is listed in tests/opinfo_expected_failures.txt with its class and reason.
Each op's test fails on a case that is not listed (a new failure, or a different class) and on a
listed case that passes (strict xfail: delete its line), so the list only shrinks.
`reference_inputs` (extremal values, more shapes) run in the slow test.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from opinfo_harness import (  # noqa: E402  (after the importorskip: the harness imports torch)
    CLASSES,
    DTYPE_PATHS,
    EXPECTED_FILE,
    GRADGRAD_PATHS,
    PATHS,
    load_op_db,
    mapped_ops,
    read_expected,
    run_op,
    samples,
    supports_gradgrad,
)

import tensorgrad as tg  # noqa: E402

pytestmark = pytest.mark.reference

# Loaded once per process (a few seconds): the op list parametrizes the tests.
MAPPED = mapped_ops(load_op_db())
BY_ID = {oid: (info, call) for oid, info, call, _ in MAPPED}
# The mapping only grows: a public name that stops mapping (a rename, a lost method) fails here.
MIN_MAPPED_NAMES = 449


def _expected(oid, kinds):
    return {k: v for k, v in read_expected().items() if k[0] == oid and k[2][0] in kinds}


def _check(oid, kinds):
    info, call = BY_ID[oid]
    results = run_op(info, call, kinds=kinds)
    observed = {k: v for k, v in results.items() if v[0] in CLASSES}
    expected = _expected(oid, kinds)
    new = sorted(
        f"  {' '.join(k)}  {cls}  {reason}"
        for k, (cls, reason) in observed.items()
        if k not in expected or expected[k][0] != cls
    )
    fixed = sorted(
        f"  {' '.join(k)}  {cls}  (now {results.get(k, ('not run',))[0]})"
        for k, (cls, _) in expected.items()
        if k not in observed
    )
    message = []
    if new:
        listed = f"{len(new)} case(s) fail and are not listed in {EXPECTED_FILE.name} as such:"
        message.append(listed + "\n" + "\n".join(new))
    if fixed:
        message.append(f"{len(fixed)} listed case(s) no longer fail that way: delete their lines\n" + "\n".join(fixed))
    assert not message, "\n".join(message)


@pytest.mark.parametrize("oid", list(BY_ID))
def test_opinfo_samples(oid):
    """sample_inputs (float64, float32) on the three paths, and error_inputs."""
    _check(oid, ("s", "e"))


@pytest.mark.slow
@pytest.mark.parametrize("oid", list(BY_ID))
def test_opinfo_reference_inputs(oid):
    """reference_inputs (float64): extremal values (nan, inf, large and tiny) and more shapes."""
    _check(oid, ("r",))


# The ops whose OpInfo supports a second derivative (and a first), in float64.
GRADGRAD = [oid for oid, (info, _) in BY_ID.items() if supports_gradgrad(info)]


@pytest.mark.parametrize("oid", GRADGRAD)
def test_opinfo_second_order(oid):
    """The second derivative of the op's float64 sample_inputs against PyTorch's (module docstring).

    Bounded for time (the class takes about a minute on one core): float64 only, the first
    MAX_GRADGRAD_SAMPLES (20) samples of the op's deterministic list, on the kernels path."""
    _check(oid, ("g",))


class _SinDetached(tg.autograd.Function):
    """sin with a backward right to first order and wrong to second: cos computed from x.detach()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.detach().cos()


def test_second_order_catches_a_detached_backward():
    """The second-order comparison can fail: a formula that loses d/dx of cos(x) is reported wrong."""
    info, _ = BY_ID["sin"]
    results = run_op(info, lambda x: _SinDetached.apply(x), kinds=("g",))
    wrong = [reason for cls, reason in results.values() if cls == "wrong"]
    assert wrong and all(r.startswith("second derivative wrt input 0") for r in wrong), results
    assert run_op(info, BY_ID["sin"][1], kinds=("g",)) and all(
        cls == "pass" for cls, _ in run_op(info, BY_ID["sin"][1], kinds=("g",)).values()
    )


def test_expected_failures_name_real_cases():
    """Every listed case names a mapped op, a dtype, a sample kind and a path, and gives a reason."""
    problems = []
    for key, (_cls, reason) in read_expected().items():
        op, dtype, sample, path = key
        if op not in BY_ID:
            problems.append(f"{key}: no mapped op {op!r}")
        if sample[:1] not in "sreg" or not sample[1:].isdigit():
            problems.append(f"{key}: sample must be s<i>, r<i>, e<i> or g<i>")
        if (sample[0] == "e") != (dtype == "any") or (dtype != "any" and path not in DTYPE_PATHS.get(dtype, ())):
            problems.append(f"{key}: dtype / path do not fit the sample kind")
        if sample[0] == "g" and (dtype != "float64" or path not in GRADGRAD_PATHS or op not in GRADGRAD):
            problems.append(f"{key}: a second-order case is a float64 case of a gradgrad op on {GRADGRAD_PATHS}")
        if path not in PATHS:
            problems.append(f"{key}: path must be one of {PATHS} or *")
        if not reason.strip():
            problems.append(f"{key}: no reason given")
    assert not problems, "\n".join(problems)


def test_mapping_does_not_shrink():
    names = {info.name for info, _ in BY_ID.values()}
    assert len(names) >= MIN_MAPPED_NAMES, f"only {len(names)} OpInfo names map to tensorgrad"


@pytest.mark.parametrize("oid", ["add", "nn.functional.conv2d", "meshgrid.list_of_tensors", "scatter_reduce.sum"])
def test_sample_ids_are_stable(oid):
    """Drawing an op's samples twice gives the same samples (values included), so ids name cases."""
    info, _ = BY_ID[oid]

    def draw():
        torch.randn(7)  # the generator's state before the draw must not matter
        return [(s.input, s.args, s.kwargs) for s in samples(info, "s", "float64")]

    assert _same(draw(), draw())


def _bytes(t):
    return t.detach().reshape(-1).numpy().tobytes()


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        same_kind = isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
        return same_kind and _bytes(a) == _bytes(b)  # bit for bit (NaNs included)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_supported_ops_page_is_up_to_date():
    """docs/supported_ops.md's generated block is what tools/supported_ops.py writes from the mapping, the samples
    and the expected-failures list (run it after mapping an op or shrinking the list)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tools" / "supported_ops.py"
    spec = importlib.util.spec_from_file_location("supported_ops", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    block = tool.page_block(tool.PAGE.read_text())
    assert block is not None, "docs/supported_ops.md has lost its generated supported-ops block"
    stale = "docs/supported_ops.md is stale: run python tools/supported_ops.py"
    assert block == tool.build(MAPPED, read_expected()), stale
