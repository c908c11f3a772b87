"""tg.special, as torch.special: the special functions (ops/special.py and the elementary ones
PyTorch also files here).  PyTorch's aliases (special.erf is torch.erf, special.psi is
special.digamma, ...) are the same functions."""

from __future__ import annotations

from . import backend
from .functions import digamma, erf, erfc, erfinv, expm1, i0, log1p, logit, sinc, xlogy
from .ops.special import I1, Entr, Erfcx, I0e, I1e, LogNdtr, Ndtr, Ndtri
from .tensor import Tensor

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "expit", "expm1", "exp2", "gammaln", "i0", "i0e", "i1",
    "i1e", "log1p", "log_ndtr", "logit", "ndtr", "ndtri", "psi", "sinc", "xlog1py", "xlogy",
]  # fmt: skip


def _no_half(input: Tensor, op: str):
    """PyTorch has no float16 kernel of ndtri, log_ndtr and erfcx, and refuses it."""
    if input.dtype == backend.float16:
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
