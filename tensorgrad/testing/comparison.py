"""assert_close: torch.testing.assert_close's rule and defaults, with a diff you can read.

Two values are close where |actual - expected| <= atol + rtol * |expected| (infinities must be
equal; NaNs only with equal_nan=True).  Without rtol and atol, both come from the dtypes, as in
PyTorch (the larger of the two inputs' defaults):

    float16  rtol 1e-3    atol 1e-5
    float32  rtol 1.3e-6  atol 1e-5
    float64  rtol 1e-7    atol 1e-7
    integers and bool: exact
"""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor

np = backend.namespace("cpu")  # comparisons run on host copies

DEFAULT_TOLERANCES = {  # dtype -> (rtol, atol), torch.testing's table
    backend.float16: (1e-3, 1e-5),
    backend.float32: (1.3e-6, 1e-5),
    backend.float64: (1e-7, 1e-7),
}
SHOWN = 5  # mismatching elements listed in the message


def _host(value):
    """(host array, dtype, device) of a Tensor, a NumPy array or Python data."""
    if isinstance(value, Tensor):
        return value.numpy(), value.dtype, value.device
    if backend.is_array(value):
        return backend.to_numpy(value), value.dtype, backend.device_of(value)
    array = np.asarray(value)
    return array, array.dtype, None


def default_tolerances(*dtypes) -> tuple:
    """(rtol, atol) for comparing values of these dtypes (the loosest of their defaults)."""
    pairs = [DEFAULT_TOLERANCES.get(backend.as_dtype(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def assert_close(
    actual, expected, *, rtol=None, atol=None, equal_nan=False, check_device=True, check_dtype=True, msg=None
):
    """Raise AssertionError unless `actual` and `expected` have the same shape (and dtype and
    device, when both are tensors) and are elementwise close; see the module docstring."""
    a, a_dtype, a_device = _host(actual)
    e, e_dtype, e_device = _host(expected)
    both_tensors = isinstance(actual, Tensor) and isinstance(expected, Tensor)
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"assert_close: both rtol and atol must be given or both omitted, got rtol={rtol} and atol={atol}"
        )
    problem = None
    if a.shape != e.shape:
        problem = f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}."
    elif both_tensors and check_dtype and a_dtype != e_dtype:
        problem = f"The values for attribute 'dtype' do not match: {a_dtype} != {e_dtype}."
    elif both_tensors and check_device and a_device != e_device:
        problem = f"The values for attribute 'device' do not match: {a_device} != {e_device}."
    if problem is None:
        if rtol is None:
            rtol, atol = default_tolerances(a_dtype, e_dtype)
        problem = _mismatch_report(a, e, rtol, atol, equal_nan)
    if problem is not None:
        raise AssertionError(problem if msg is None else f"{msg}\n\n{problem}")


def _mismatch_report(a, e, rtol, atol, equal_nan):
    """None when close; otherwise torch's summary and the first few mismatching elements."""
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        a, e = a.astype(np.int64), e.astype(np.int64)
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - e64)
        close = diff <= atol + rtol * np.abs(e64)
        close |= a64 == e64  # equal infinities
        if equal_nan:
            close |= np.isnan(a64) & np.isnan(e64)
    bad = ~close
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(e64)
    abs_masked = np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0)
    rel_masked = np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0)
    ia, ir = np.unravel_index(int(abs_masked.argmax()), a.shape), np.unravel_index(int(rel_masked.argmax()), a.shape)
    kind = "Scalars" if a.ndim == 0 else "Tensor-likes"
    lines = [
        f"{kind} are not close!",
        "",
        f"Mismatched elements: {n_bad} / {a.size} ({100 * n_bad / max(a.size, 1):.1f}%)",
        f"Greatest absolute difference: {diff[ia]:.6g} at index {_index(ia)} (up to {atol:g} allowed)",
        f"Greatest relative difference: {rel[ir]:.6g} at index {_index(ir)} (up to {rtol:g} allowed)",
    ]
    if a.ndim:
        lines += ["", "index: actual vs expected (difference)"]
        for k in np.flatnonzero(bad.reshape(-1))[:SHOWN]:
            i = np.unravel_index(int(k), a.shape)
            lines.append(f"  {_index(i)}: {a[i].item()!r} vs {e[i].item()!r} ({a64[i] - e64[i]:+.3g})")
        if n_bad > SHOWN:
            lines.append(f"  ... and {n_bad - SHOWN} more")
    return "\n".join(lines)


def _index(i) -> str:
    return "(" + ", ".join(str(int(v)) for v in i) + ("," if len(i) == 1 else "") + ")"
