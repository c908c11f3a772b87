"""torch.* functions that take several tensors (cat, stack, where) and the functional
spellings of Tensor methods (tg.exp(x) == x.exp()).

One module per family: shape.py (cat, stack, where, indexing and shape), pointwise.py
(arithmetic, elementwise math, predicates, logical and bitwise ops), reductions.py (reductions,
scans, selection, softmax), statistics.py (median, quantile, ..., counting and histograms,
searchsorted, trapezoid, one_hot) and products.py (matmul, einsum, mm, addmm, ..., norm);
common.py holds what two of them share.  Every family is re-exported here (`from
tensorgrad.functions import where`); tensorgrad/__init__.py imports each from its module."""

from .pointwise import *  # noqa: F403
from .products import *  # noqa: F403
from .reductions import *  # noqa: F403
from .shape import *  # noqa: F403
from .statistics import *  # noqa: F403
