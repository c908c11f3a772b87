"""tg.special, as torch.special: the special functions (ops/special.py and the elementary ones
PyTorch also files here).  PyTorch's aliases (special.erf is torch.erf, special.psi is
special.digamma, ...) are the same functions."""

from __future__ import annotations

from . import backend
from .functions import digamma, erf, erfc, erfinv, expm1, i0, log1p, logit, polygamma, sinc, xlogy
from .ops.special import I1, Entr, Erfcx, I0e, I1e, LogNdtr, Ndtr, Ndtri
from .ops.special import zeta as zeta_values
from .tensor import Tensor

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "expit", "expm1", "exp2", "gammaln", "i0", "i0e", "i1",
    "i1e", "log1p", "log_ndtr", "logit", "ndtr", "ndtri", "polygamma", "psi", "sinc", "xlog1py", "xlogy",
    # no derivative (as in PyTorch): the results are outside the graph
    "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "zeta",
]  # fmt: skip


def _no_half(input, op: str):
    """PyTorch has no float16 kernel of ndtri, log_ndtr, erfcx and the functions without a derivative
    (the Bessel functions, zeta), and refuses it."""
    if isinstance(input, Tensor) and input.dtype == backend.float16:
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'Half\'')


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2."""
    return input._special(Ndtr, "ndtr")


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ndtr on (0, 1)."""
    _no_half(input, "ndtri")
    return input._special(Ndtri, "ndtri")


def log_ndtr(input: Tensor) -> Tensor:
    """log(ndtr(x)), accurate far into the left tail."""
    _no_half(input, "log_ndtr")
    return input._special(LogNdtr, "log_ndtr")


def erfcx(input: Tensor) -> Tensor:
    """exp(x^2) erfc(x)."""
    _no_half(input, "erfcx")
    return input._special(Erfcx, "erfcx")


def entr(input: Tensor) -> Tensor:
    """-x log(x), 0 at x = 0, -inf for x < 0."""
    return input._special(Entr, "entr")


def i0e(input: Tensor) -> Tensor:
    """exp(-|x|) I0(x)."""
    return input._special(I0e, "i0e")


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1."""
    return input._special(I1, "i1")


def i1e(input: Tensor) -> Tensor:
    """exp(-|x|) I1(x)."""
    return input._special(I1e, "i1e")


def xlog1py(input, other) -> Tensor:
    """input * log1p(other), 0 where input = 0; either may be a number (not both)."""
    if isinstance(input, Tensor):
        return input._xlogy(other, log1p=True)
    return other._xlogy(input, log1p=True, reflected=True)


def gammaln(input: Tensor) -> Tensor:
    return input.lgamma()


def expit(input: Tensor) -> Tensor:
    return input.sigmoid()


def exp2(input: Tensor) -> Tensor:
    return input.exp2()


psi = digamma


# ---------------------------------------------------------------- no derivative in PyTorch: outside the graph
def modified_bessel_i0(input: Tensor) -> Tensor:
    _no_half(input, "modified_bessel_i0")
    return input._special_values("modified_bessel_i0", "i0")


def modified_bessel_i1(input: Tensor) -> Tensor:
    _no_half(input, "modified_bessel_i1")
    return input._special_values("modified_bessel_i1", "i1")


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 0 (nan for x < 0, inf at 0)."""
    _no_half(input, "modified_bessel_k0")
    return input._special_values("modified_bessel_k0", "k0")


def modified_bessel_k1(input: Tensor) -> Tensor:
    _no_half(input, "modified_bessel_k1")
    return input._special_values("modified_bessel_k1", "k1")


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """exp(x) K0(x)."""
    _no_half(input, "scaled_modified_bessel_k0")
    return input._special_values("scaled_modified_bessel_k0", "k0e")


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    _no_half(input, "scaled_modified_bessel_k1")
    return input._special_values("scaled_modified_bessel_k1", "k1e")


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """sin(x) / x: 1 at 0, and 0 at +-inf (PyTorch's limit)."""
    _no_half(input, "spherical_bessel_j0")
    x = input._floating("spherical_bessel_j0")

    def j0(xp, a):
        safe = xp.where(a == 0, 1, a)
        return xp.where(a == 0, 1, xp.where(xp.isinf(a), 0, xp.sin(safe) / safe)).astype(a.dtype, copy=False)

    return x._values("spherical_bessel_j0", j0)


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function sum_k (k + other)^-input; either may be a number (not both)."""
    _no_half(input, "zeta")
    _no_half(other, "zeta")
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("zeta(): expected a Tensor argument")
        q, s = other._operands(input, "zeta")
        return q._floating("zeta")._values("zeta", lambda xp, q, s: zeta_values(xp, s, q), s)
    s, q = input._operands(other, "zeta")
    q = q._floating("zeta") if isinstance(q, Tensor) else q
    return s._floating("zeta")._values("zeta", zeta_values, q)
