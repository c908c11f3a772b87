"""Testing helpers, after torch.testing: `assert_close`, `check_gradients`, and (in
`tensorgrad.testing.strategies`, which needs hypothesis) strategies for property tests.

    from tensorgrad.testing import assert_close, check_gradients, compare_grads
    assert_close(model(x), expected)             # PyTorch's tolerances for the dtype
    check_gradients(MyOp.apply, x, y, 2.0)       # backward against finite differences
    compare_grads("h", dh, h)                    # a hand-written gradient against h.grad

Importing this package does not import hypothesis; only `tensorgrad.testing.strategies` does.
"""

from .comparison import assert_close
from .gradients import check_gradients
from .grads import GradComparison, compare_grads

__all__ = ["GradComparison", "assert_close", "check_gradients", "compare_grads"]
