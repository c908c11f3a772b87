"""torch.* functions that take several tensors (cat, stack, where) and the functional
spellings of Tensor methods (tg.exp(x) == x.exp()).

One module per family of the functions written out: shape.py (cat, stack, where, joining and
splitting), pointwise.py (arithmetic with a number on either side, polygamma, xlogy, the bitwise
shifts), reductions.py (var, std, var_mean, std_mean), statistics.py (isin, searchsorted,
bucketize, trapezoid, one_hot) and products.py (einsum, tensordot); common.py holds what two of
them share.  The functions that only call their Tensor method (tg.exp, tg.sum, tg.gather, ...) are
not written out: forwarders.py generates them from the table of public names
(tensorgrad/_public_names.py).  Every function is re-exported here (`from tensorgrad.functions
import where`); tensorgrad/__init__.py takes each from its module, as the table says."""

from .forwarders import *  # noqa: F403
from .pointwise import *  # noqa: F403
from .products import *  # noqa: F403
from .reductions import *  # noqa: F403
from .shape import *  # noqa: F403
from .statistics import *  # noqa: F403
