"""The property behind version counters: after in-place writes to any tensors of a graph (inputs,
constants, intermediate results, through views, .data or detach), backward either raises
PyTorch's "modified by an inplace operation" error or returns exactly the gradient of the
untouched graph, which is rebuilt from the original values to compare.  Never a wrong one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorgrad as tg

SHAPE = (2, 3)
MODIFIED = "modified by an inplace operation"

# Every op maps (2, 3) tensors to a (2, 3) tensor, so any pool member can feed any op; together
# they save inputs (mul, div, square, layer_norm), outputs (exp, tanh, softmax), views of their
# inputs (reshape, transpose, slices) or nothing (add, sub).
OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "square": lambda a, b: a**2,
    "tanh": lambda a, b: a.tanh(),
    "exp": lambda a, b: (a * 0.3).exp(),
    "relu": lambda a, b: a.relu(),
    "softmax": lambda a, b: a.softmax(-1),
    "layer_norm": lambda a, b: a.layer_norm(3),
    "matmul": lambda a, b: (a @ b.T) @ a * 0.2,
    "reshape": lambda a, b: a.reshape(3, 2).reshape(2, 3),
    "transpose": lambda a, b: a.T.T * b,
    "slice": lambda a, b: tg.cat([a[:, 1:], a[:, :1]], dim=1),
    "index": lambda a, b: a[tg.tensor([1, 0], device=a.device)] * b,
    "amax": lambda a, b: a * a.amax(-1, keepdim=True),
    "mean": lambda a, b: a - a.mean(-1, keepdim=True),
}

# Ways to reach a tensor's storage for a write (all under no_grad, where writes are allowed).
VIEWS = {
    "itself": lambda t: t,
    "data": lambda t: t.data,
    "detach": lambda t: t.detach(),
    "row": lambda t: t[1],
    "reshape": lambda t: t.reshape(6),
    "transpose": lambda t: t.T,
}

WRITES = {
    "setitem": lambda v, x: v.__setitem__(0, x),
    "add_": lambda v, x: v.add_(x),
    "mul_": lambda v, x: v.mul_(1 + x),
    "fill_": lambda v, x: v.fill_(x),
    "iadd": lambda v, x: v.__iadd__(x),
    "copy_": lambda v, x: v.copy_(v * 0 + x),
}


def build(values, program, device):
    """The graph: 2 leaves that require grad and 2 constants, then each (op, i, j) appends
    OPS[op](pool[i], pool[j]); the loss weights every tensor of the pool by a fixed cotangent."""
    pool = [tg.tensor(v, device=device, requires_grad=k < 2) for k, v in enumerate(values)]
    for op, i, j in program:
        pool.append(OPS[op](pool[i % len(pool)], pool[j % len(pool)]))
    weights = np.linspace(-1, 1, 6).reshape(SHAPE)
    loss = sum((t * tg.tensor(weights * (k + 1), device=device)).sum() for k, t in enumerate(pool))
    return pool, loss


program_steps = st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 20), st.integers(0, 20))
write_steps = st.tuples(st.integers(0, 20), st.sampled_from(sorted(WRITES)), st.floats(-1, 1))


@given(
    seed=st.integers(0, 2**16),
    program=st.lists(program_steps, min_size=1, max_size=6),
    writes=st.lists(write_steps, min_size=1, max_size=3),
)
def test_backward_after_inplace_writes_raises_or_is_exact(device, seed, program, writes):
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1.5, 1.5, SHAPE) for _ in range(4)]  # float64
    ref_pool, ref_loss = build(values, program, device)  # the untouched graph, from the original values
    ref_loss.backward()
    for view in VIEWS:  # the same writes, through each way of reaching a tensor's storage
        pool, loss = build(values, program, device)
        with tg.no_grad():
            for target, write, x in writes:
                WRITES[write](VIEWS[view](pool[target % len(pool)]), x)
        try:
            loss.backward()
        except RuntimeError as e:
            assert MODIFIED in str(e)  # the only error allowed: a stale saved array was noticed
            continue
        for k in range(2):
            # the same float64 ops on the same values in the same order: identical
            np.testing.assert_array_equal(pool[k].grad.numpy(), ref_pool[k].grad.numpy())


def test_the_property_sees_writes_that_matter():
    """The property test is not vacuous: a write to a saved array does raise, and a write the
    gradient does not depend on does not."""
    values = [np.full(SHAPE, 0.5) for _ in range(4)]
    pool, loss = build(values, [("mul", 0, 2)], "cpu")  # mul saves the constant pool[2]
    with tg.no_grad():
        pool[2].data[0, 0] = 3.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()
    pool, loss = build(values, [("add", 0, 2)], "cpu")  # add saves nothing
    with tg.no_grad():
        pool[2].data[0, 0] = 3.0
    loss.backward()
    # loss = sum(w * pool[0]) + sum(5 w * (pool[0] + pool[2])) + ...: the gradient is w + 5 w
    w = np.linspace(-1, 1, 6).reshape(SHAPE)
    np.testing.assert_array_equal(pool[0].grad.numpy(), w + 5 * w)  # the engine adds the same two float64 terms
