"""The table of ops: one line per case, grouped in one section per file of tensorgrad/ops/.

`OPS` is the one list of ops the gradient checks (test_gradcheck_ops.py), the PyTorch
reference tests (test_reference_torch.py) and the GPU parity tests (test_gpu.py) are
generated from.  Each entry is one line: a name, the input shapes, and `fn(lib, *xs)`
written once for both libraries -- `lib` is `tensorgrad` or `torch`, which spell these
ops the same way (x.softmax(-1), lib.cat, lib.nn.functional.layer_norm, ...).
Non-differentiable arguments (masks, ids) are constants made on the inputs' device.

The sections follow the files of tensorgrad/ops/ in alphabetical order, each headed by the
file that holds the op's backward (the op a case is about: a case may call others on the way).
A new op's case goes in its file's section; running one case forward and backward is in
helpers.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tensorgrad as tg
import tensorgrad.nn.functional  # noqa: F401  (makes tg.nn.functional reachable as lib.nn.functional)

NEG_INF = float("-inf")
NAN = float("nan")

# Constants shared by the table (fixed, so every library and device sees the same ones).
MASK_34 = np.array(
    [[True, False, False, True], [False, False, True, False], [False, True, False, False]]
)  # (3, 4): no row fully masked, so softmax stays finite
MASK_4 = np.array([False, True, False, True])  # broadcasts against (3, 4)
COND_34 = np.array([[True, False, True, True], [False, True, False, False], [True, True, False, True]])
TARGETS_5 = np.array([2, 0, 3, 2, 1])  # (5,) ids into 4 classes, with a repeat
TARGETS_5_IGNORED = np.array([2, -100, 3, 2, -100])  # two rows ignored (PyTorch's default ignore_index)
MASK_45 = np.array(
    [
        [True, False, True, True, False],
        [True, True, False, False, False],
        [False, False, False, False, True],
        [True, True, True, True, True],
    ]
)  # (4, 5): each row attends
IDS_25 = np.array([[1, 4, 1, 0, 4], [5, 1, 1, 2, 0]])  # (2, 5) ids into 6 rows, repeated ids accumulate


MASK_44 = np.array(
    [[True, False, True, False], [True, True, False, False], [False, False, False, True], [True, True, True, True]]
)  # (4, 4): not causal, each row attends


# Index constants of the indexing and shape ops (repeats on purpose: their gradients must add up).
IDX_G0 = np.array([[0, 1, 1, 2], [2, 2, 0, 0]])  # (2, 4) rows of a (3, 4) input, along dim 0
IDX_G1 = np.array([[3, 3], [0, 1], [2, 0]])  # (3, 2) columns of a (3, 4) input, along dim 1
IDX_S1 = np.array([[3, 0, 1], [2, 1, 0]])  # (2, 3) distinct per row: scatter's writes do not collide
IDX_SEL = np.array([2, 0, 2])
REPEATS_3 = np.array([1, 0, 2])

IDX_ADD = np.array([2, 0, 2])  # rows of a (3, 4) input, one repeated: index_add's and index_put's sums must add up
IDX_COPY = np.array([2, 0])  # distinct rows: index_copy's writes do not collide
IDX_TAKE = np.array([[0, 11, 5], [5, 3, -1]])  # flat positions of a (3, 4) input, a repeat and a negative one
IDX_ALONG = np.array([[0, 3], [1, 1], [2, 0]])  # (3, 2) columns of a (3, 4) input, along dim 1


# Loss constants: class weights, probability targets, ids for (N, C, d) logits, BCE weights.
WEIGHTS_4 = np.array([0.5, 1.0, 2.0, 1.5])  # (4,) per class
PROBS_54 = np.array(
    [[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25] * 4, [0.5, 0.0, 0.5, 0.0], [0.0, 0.3, 0.0, 0.7]]
)  # (5, 4) rows of class probabilities
TARGETS_23 = np.array([[1, 3, 0], [2, -100, 3]])  # (2, 3) ids for (2, 4, 3) logits, one ignored
POS_WEIGHT_4 = np.array([3.0, 0.5, 1.0, 2.0])
SIGNS_34 = np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0, -1.0]])  # +-1 targets
SIGNS_3 = np.array([1.0, -1.0, 1.0])
LABELS_24 = np.array([[3, 0, -1, 1], [1, 1, 2, -1]])  # listed classes up to the first -1 (a repeat counts twice)
COUNTS_34 = np.array([[0.0, 1.0, 3.0, 2.0], [5.0, 0.0, 1.0, 4.0], [2.0, 7.0, 0.0, 1.0]])  # Poisson targets, some > 1


# Statistics constants: integer frequencies for cov's fweights.
FWEIGHTS_4 = np.array([1, 2, 1, 3])
NAN = float("nan")


# In-place cases (ops/inplace.py): each writes into `x * 1`, a non-leaf (a leaf that requires grad
# may not be written in grad mode), so the write is a node of the graph between x and the output.
IDX_SET = np.array([2, 0])  # distinct rows of a (3, 4) input (with a repeat the last write wins: no gradcheck)


# Matrices for the decompositions (ops/decompositions.py), made from U(-2, 2) inputs by the case
# itself, so that the finite differences see the same map: shifted by 4 I (U(-2, 2) entries of a
# 3 x 3 matrix perturb 4 I by less than 4 in norm: no small pivot, well conditioned), or made
# symmetric positive-definite (x x^T + I).
def shifted(lib, x):
    return x + 4 * lib.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def spd(lib, x):
    return x @ x.mT + lib.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def tg_or_torch_triangular_solve(lib, b, a):
    """triangular_solve(b, A, upper=False, transpose=True).solution: tg.triangular_solve on tensorgrad;
    on PyTorch (whose spelling is deprecated and warns) the linalg one it stands for."""
    if lib is tg:
        return lib.triangular_solve(b, a, upper=False, transpose=True).solution
    return lib.linalg.solve_triangular(a.tril().mT, b, upper=True)


def iadd(lib, x, b):
    y = x * 1
    y += b
    return y


def isub_alpha(lib, x, b):
    return (x * 1).sub_(b, alpha=2)


def imul(lib, x, b):
    y = x * 1
    y *= b
    return y


def idiv(lib, x, b):
    y = x * 1
    y /= b
    return y


def clamp_tensors(lib, x, lo, hi):
    return (x * 1).clamp_(lo - 1, hi + 1)


def setitem_row(lib, x, b):
    y = x * 1
    y[1] = b
    return y


def setitem_rows(lib, x, b):
    y = x * 1
    y[const(lib, x, IDX_SET)] = b
    return y


def iadd_through_view(lib, x, b):
    y = x * 1
    y[:, 1] += b
    y[2].mul_(b[0])
    return y


def copy_fill_mask(lib, x, b):
    y = x * 1
    y[:2].copy_(b)
    y[2].fill_(b[1, 0])
    return y.masked_fill_(const(lib, x, MASK_34), 0.5)


def sigmoid(x):
    """1 / (1 + exp(-x)), spelled with ops both libraries have: BCE inputs and targets in (0, 1)."""
    return 1 / (1 + (-x).exp())


def packed_self_attention(lib, qkv, heads, **kwargs):
    """tensorgrad's packed op; for torch, the split / permute / sdpa / reshape it stands for."""
    if lib is tg:
        return F(lib).packed_self_attention(qkv, heads, **kwargs)
    B, T, three_hd = qkv.shape
    q, k, v = qkv.view(B, T, 3, heads, three_hd // (3 * heads)).permute(2, 0, 3, 1, 4)
    out = F(lib).scaled_dot_product_attention(q, k, v, **kwargs)  # (B, H, T, d)
    return out.transpose(1, 2).reshape(B, T, -1)


def const(lib, like, array):
    """A constant (mask, ids) on the same device as the tensor `like`."""
    return lib.tensor(array, device=like.device)


def F(lib):
    return lib.nn.functional


@dataclass
class Case:
    """One op: `fn(lib, *xs)` on float inputs of `shapes` drawn from `domain`."""

    name: str
    shapes: tuple
    fn: object
    domain: str = "real"  # "real": U(-2, 2); "positive": U(0.5, 2); "nonzero": +-U(0.5, 2); "zeros": see make_inputs
    gradcheck: dict = field(default_factory=dict)  # extra gradcheck arguments (eps, atol)
    strict: bool = True  # runs on the strict (CuPy-like) device too
    torch_tol: dict | None = None  # the PyTorch comparison's tolerance, where not the default

    def __repr__(self):
        return self.name


def make_inputs(case: Case, seed: int = 0, dtype=np.float64) -> list:
    """Host float arrays for a case (bounded, and away from kinks/poles where the domain says)."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in case.shapes:
        if case.domain == "positive":
            a = rng.uniform(0.5, 2.0, shape)
        elif case.domain == "nonzero":
            a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        elif case.domain == "zeros":  # U(-2, 2) with every third element exactly 0
            a = rng.uniform(-2.0, 2.0, shape)
            a.reshape(-1)[::3] = 0.0
        else:
            a = rng.uniform(-2.0, 2.0, shape)
        out.append(np.asarray(a, dtype=dtype))
    return out


def C(name, shapes, fn, **kw) -> Case:
    return Case(name, tuple(shapes), fn, **kw)


# fmt: off
OPS = [
    # ================================================================ ops/activation.py
    # Kinks (hardtanh/relu6/hardsigmoid at their bounds, elu/celu/leaky_relu at 0) are measure-zero:
    # the seeded uniform inputs land further than eps=1e-6 from every one of them, so the central
    # differences are not straddling one.
    C("sigmoid", [(3, 4)], lambda lib, x: x.sigmoid()),
    C("sigmoid_fn_saturated", [(3, 4)], lambda lib, x: lib.sigmoid(x * 30)),
    C("silu", [(3, 4)], lambda lib, x: F(lib).silu(x)),
    C("softplus", [(3, 4)], lambda lib, x: F(lib).softplus(x)),
    C("softplus_beta_threshold", [(3, 4)], lambda lib, x: F(lib).softplus(x * 3, beta=2.0, threshold=4.0)),
    C("hardtanh", [(3, 4)], lambda lib, x: F(lib).hardtanh(x)),
    C("hardtanh_bounds", [(3, 4)], lambda lib, x: F(lib).hardtanh(x, -0.5, 1.5)),
    C("relu6", [(3, 4)], lambda lib, x: F(lib).relu6(x * 4)),
    # PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32 (relative error 3e-8)
    C("hardsigmoid", [(3, 4)], lambda lib, x: F(lib).hardsigmoid(x * 3), torch_tol={"rtol": 1e-7, "atol": 1e-9}),
    C("softsign", [(3, 4)], lambda lib, x: F(lib).softsign(x)),
    C("elu", [(3, 4)], lambda lib, x: F(lib).elu(x)),
    C("elu_alpha", [(3, 4)], lambda lib, x: F(lib).elu(x, 2.0)),
    C("celu", [(3, 4)], lambda lib, x: F(lib).celu(x, alpha=0.5)),
    C("leaky_relu", [(3, 4)], lambda lib, x: F(lib).leaky_relu(x)),
    C("leaky_relu_slope", [(3, 4)], lambda lib, x: F(lib).leaky_relu(x, 0.2)),
    C("mish", [(3, 4)], lambda lib, x: F(lib).mish(x)),
    C("activation_modules", [(3, 4)], lambda lib, x: lib.nn.Sequential(
        lib.nn.SiLU(), lib.nn.Softplus(2.0), lib.nn.ELU(0.5), lib.nn.Mish(), lib.nn.LeakyReLU(0.1), lib.nn.CELU(),
        lib.nn.Softsign(), lib.nn.Sigmoid(), lib.nn.Tanh())(x * 2)),
    C("activation_modules_bounded", [(3, 4)], lambda lib, x: lib.nn.Sequential(
        lib.nn.Hardtanh(-1.5, 1.0), lib.nn.Hardsigmoid(), lib.nn.ReLU6())(x * 2),
      torch_tol={"rtol": 1e-7, "atol": 1e-9}),  # hardsigmoid's float32 1/6, as above
    C("tanh", [(3, 4)], lambda lib, x: x.tanh()),
    C("tanh_F", [(3, 4)], lambda lib, x: F(lib).tanh(x)),
    C("relu", [(3, 4)], lambda lib, x: x.relu()),
    C("relu_F", [(3, 4)], lambda lib, x: F(lib).relu(x)),
    C("gelu", [(3, 4)], lambda lib, x: F(lib).gelu(x)),
    C("gelu_tanh", [(3, 4)], lambda lib, x: F(lib).gelu(x, approximate="tanh")),
    C("selu", [(3, 4)], lambda lib, x: F(lib).selu(x)),
    C("logsigmoid", [(3, 4)], lambda lib, x: F(lib).logsigmoid(x * 20)),
    C("hardswish", [(3, 4)], lambda lib, x: F(lib).hardswish(x * 3)),
    C("hardshrink", [(3, 4)], lambda lib, x: F(lib).hardshrink(x, 0.7)),
    C("softshrink", [(3, 4)], lambda lib, x: F(lib).softshrink(x)),
    C("tanhshrink", [(3, 4)], lambda lib, x: F(lib).tanhshrink(x)),
    C("threshold", [(3, 4)], lambda lib, x: F(lib).threshold(x, 0.3, -2.0)),
    C("softmin", [(3, 4)], lambda lib, x: F(lib).softmin(x, dim=1)),
    C("glu", [(3, 4)], lambda lib, x: F(lib).glu(x, dim=1)),
    C("glu_dim0", [(4, 3)], lambda lib, x: F(lib).glu(x, 0)),
    C("prelu_channels", [(2, 3, 4), (3,)], lambda lib, x, w: F(lib).prelu(x, w)),
    C("prelu_one", [(3, 4), (1,)], lambda lib, x, w: F(lib).prelu(x, w)),
    C("rrelu_eval", [(3, 4)], lambda lib, x: F(lib).rrelu(x)),
    C("activation_modules_shrink", [(3, 4)], lambda lib, x: lib.nn.Sequential(
        lib.nn.SELU(), lib.nn.Hardswish(), lib.nn.Hardshrink(0.1), lib.nn.Softshrink(0.2), lib.nn.Tanhshrink(),
        lib.nn.Threshold(-0.1, 0.5), lib.nn.LogSigmoid(), lib.nn.GLU(), lib.nn.Softmin(1))(x * 2)),
    C("prelu_module", [(2, 3, 4)], lambda lib, x: lib.nn.PReLU(3, init=0.1, device=x.device, dtype=x.dtype)(x)),
    # ================================================================ ops/arithmetic.py
    # Kinks and jumps (abs and sign at 0, clamp at its bounds, rounding at integers, fmod/remainder
    # where x / y is an integer) are measure-zero: the seeded uniform inputs land further than
    # eps=1e-6 from every one of them, so the central differences are not straddling one.
    # Piecewise-constant ops have a zero gradient (as PyTorch); `+ x` keeps the checked output live.
    # ---- binary, with broadcasting and Python scalars on either side
    C("add", [(3, 4), (3, 4)], lambda lib, x, y: x + y),
    C("add_broadcast", [(2, 3, 4), (3, 1)], lambda lib, x, y: x + y),
    C("add_scalar_right", [(3, 4)], lambda lib, x: x + 2.5),
    C("add_scalar_left", [(3, 4)], lambda lib, x: 2.5 + x),
    C("sub_broadcast", [(4, 1), (3,)], lambda lib, x, y: x - y),
    C("sub_scalar_right", [(3, 4)], lambda lib, x: x - 3),
    C("sub_scalar_left", [(3, 4)], lambda lib, x: 1.5 - x),
    C("mul", [(3, 4), (3, 4)], lambda lib, x, y: x * y),
    C("mul_broadcast", [(2, 1, 4), (3, 1)], lambda lib, x, y: x * y),
    C("mul_scalar_left", [(3, 4)], lambda lib, x: 3 * x),
    C("mul_scalar_right", [(3, 4)], lambda lib, x: x * -2.0),
    C("div", [(3, 4), (3, 4)], lambda lib, x, y: x / y, domain="nonzero"),
    C("div_broadcast", [(2, 3, 4), (4,)], lambda lib, x, y: x / y, domain="nonzero"),
    C("div_scalar_right", [(3, 4)], lambda lib, x: x / 4),
    C("div_scalar_left", [(3, 4)], lambda lib, x: 2.0 / x, domain="nonzero"),
    C("pow_2", [(3, 4)], lambda lib, x: x**2),
    C("pow_3", [(3, 4)], lambda lib, x: x**3),
    C("pow_half", [(3, 4)], lambda lib, x: x**0.5, domain="positive"),
    C("pow_neg_half", [(3, 4)], lambda lib, x: x**-0.5, domain="positive"),
    C("pow_neg_1", [(3, 4)], lambda lib, x: x**-1, domain="nonzero"),
    C("neg", [(3, 4)], lambda lib, x: -x),
    C("self_mul", [(3, 4)], lambda lib, x: x * x + x),
    C("add_sub_mul_fn", [(3, 4), (4,)], lambda lib, x, y: lib.sub(lib.add(x, y, alpha=2), lib.mul(x, y), alpha=0.5)),
    C("div_fn", [(3, 4), (4,)], lambda lib, x, y: lib.div(x, y) + lib.div(2.0, y), domain="nonzero"),
    C("clone", [(3, 4)], lambda lib, x: x.clone() * 2),
    # ---- dtype conversions (Cast)
    # float32 rounding (1e-7 relative) is the only error in this linear function, so a wide
    # eps keeps the central difference well above it.
    C("cast_f32_f64", [(3, 4)], lambda lib, x: (x * 3).to(lib.float32).to(lib.float64),
      gradcheck={"eps": 1e-2, "atol": 1e-4}),
    C("type_f32_f64", [(3, 4)], lambda lib, x: (x * 3).type(lib.float32).type(lib.float64),
      gradcheck={"eps": 1e-2, "atol": 1e-4}),
    C("int_times_x", [(3, 4)], lambda lib, x: (x * 3).int() * x + (x > 0).int()),
    C("abs", [(3, 4)], lambda lib, x: x.abs(), domain="nonzero"),
    C("abs_fn_builtin", [(3, 4)], lambda lib, x: lib.abs(x) + abs(x), domain="nonzero"),
    C("sign_times_x", [(3, 4)], lambda lib, x: x.sign() * x + lib.sign(x), domain="nonzero"),
    C("rounding", [(3, 4)], lambda lib, x: (x * 3).round() + (x * 3).floor() + lib.ceil(x * 3) + (x * 3).trunc() + x),
    C("round_decimals", [(3, 4)], lambda lib, x: x.round(decimals=1) + lib.round(x, decimals=2) + x),
    C("clamp_numbers", [(3, 4)], lambda lib, x: x.clamp(-0.5, 0.5)),
    C("clamp_min_only", [(3, 4)], lambda lib, x: x.clamp(min=0.2)),
    C("clip_max_fn", [(3, 4)], lambda lib, x: lib.clip(x, max=0.3)),
    C("clamp_tensors", [(3, 4), (3, 4), (4,)], lambda lib, x, lo, hi: x.clamp(lo - 0.5, hi + 0.5)),  # lo > hi too
    C("clamp_tensor_min_fn", [(3, 4), (4,)], lambda lib, x, lo: lib.clamp(x, min=lo)),
    C("fmod", [(3, 4), (3, 4)], lambda lib, x, y: lib.fmod(x * 3, y), domain="nonzero"),
    C("fmod_number", [(3, 4)], lambda lib, x: x.fmod(0.7)),
    C("remainder_op", [(3, 4), (4,)], lambda lib, x, y: (x * 3) % y, domain="nonzero"),
    C("remainder_number", [(3, 4)], lambda lib, x: lib.remainder(x, 0.7)),
    C("div_floor", [(3, 4), (3, 4)], lambda lib, x, y: lib.div(x * 3, y, rounding_mode="floor") + x * y,
      domain="nonzero"),
    C("div_trunc", [(3, 4), (4,)], lambda lib, x, y: (x * 3).div(y, rounding_mode="trunc") + x * y,
      domain="nonzero"),
    C("copysign", [(3, 4), (3, 4)], lambda lib, x, y: lib.copysign(x, y), domain="nonzero"),
    C("copysign_number", [(3, 4)], lambda lib, x: x.copysign(-1.0), domain="nonzero"),
    C("pow_tensor", [(3, 4), (3, 4)], lambda lib, x, y: x**y, domain="positive"),
    C("pow_tensor_fn_broadcast", [(3, 4), (4,)], lambda lib, x, y: lib.pow(x, y * 3), domain="positive"),
    C("pow_number_base", [(3, 4)], lambda lib, x: 2.5**x + lib.pow(0.5, x)),
    # ---- frac, nan_to_num, and the binary functions of two reals
    C("frac", [(3, 4)], lambda lib, x: (x * 3).frac() + lib.frac(x)),
    # nan and -inf written in by masks; the default +-inf replacements (the dtype's extremes) are left out:
    # 1e308 added to x would leave nothing of x for the central differences
    C("nan_to_num", [(3, 4)], lambda lib, x: lib.nan_to_num(
        x.masked_fill(const(lib, x, MASK_34), NAN).masked_fill(const(lib, x, MASK_4), NEG_INF), nan=0.5, neginf=-3.0)
      + x.masked_fill(const(lib, x, MASK_34), NAN).nan_to_num()),
    C("atan2", [(3, 4), (4,)], lambda lib, y, x: lib.atan2(y, x), domain="nonzero"),
    C("atan2_method", [(3, 4), (3, 4)], lambda lib, y, x: y.atan2(x)),
    C("hypot", [(3, 4), (3, 1)], lambda lib, x, y: lib.hypot(x, y), domain="nonzero"),
    C("logaddexp", [(3, 4), (4,)], lambda lib, x, y: lib.logaddexp(x * 3, y)),
    C("logaddexp2", [(3, 4), (3, 4)], lambda lib, x, y: x.logaddexp2(y * 3)),
    C("lerp_tensor_weight", [(3, 4), (3, 4), (4,)], lambda lib, x, y, w: lib.lerp(x, y, w)),
    C("lerp_number_weight", [(3, 4), (4,)], lambda lib, x, y: x.lerp(y, 0.3) + x.lerp(y, 0.8)),
    C("fmax_fmin", [(3, 4), (4,)], lambda lib, x, y: lib.fmax(x, y) + x.fmin(y * 0.5)),
    C("float_power", [(3, 4), (3, 4)], lambda lib, x, y: lib.float_power(x, y) + x.float_power(2.5),
      domain="positive"),
    C("float_power_number_base", [(3, 4)], lambda lib, x: lib.float_power(1.5, x)),
    C("true_divide_rsub", [(3, 4), (4,)], lambda lib, x, y: lib.true_divide(x, y) + lib.rsub(x, y, alpha=2)
      + lib.rsub(x, 1.5), domain="nonzero"),
    C("ldexp", [(3, 4), (4,)], lambda lib, x, y: lib.ldexp(x, y)),
    # non-negative: PyTorch's gradient of x takes 2^n in integers for an integer n (0 for n < 0)
    C("ldexp_int_exponent", [(3, 4)], lambda lib, x: x.ldexp(const(lib, x, np.array([0, 1, 2, 3])))),
    C("frexp", [(3, 4)], lambda lib, x: lib.frexp(x * 3).mantissa * x.frexp()[1]),  # mantissa = ldexp(x, -e)
    C("clamp_min_max", [(3, 4), (4,)], lambda lib, x, y: lib.clamp_min(x, y) + x.clamp_max(0.3) + lib.clamp_max(x, y)),
    C("nextafter", [(3, 4), (3, 4)], lambda lib, x, y: lib.nextafter(x, y) * x),
    # ================================================================ ops/attention.py
    # ---- a small composite: attention scores with a causal mask, as the GPT uses them
    C("attention", [(2, 4, 3), (2, 4, 3), (2, 4, 3)],
      lambda lib, q, k, v: (q @ k.transpose(-2, -1) * 0.5).masked_fill(
          const(lib, q, ~np.tril(np.ones((4, 4), dtype=bool))), NEG_INF).softmax(-1) @ v),
    # ---- the fused op that computes the same thing in one node
    C("sdpa_causal", [(2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 6)],
      lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True)),
    C("sdpa_mask_scale", [(2, 4, 3), (2, 5, 3), (2, 5, 2)],
      lambda lib, q, k, v: F(lib).scaled_dot_product_attention(
          q, k, v, attn_mask=const(lib, q, MASK_45), scale=0.3)),
    C("sdpa_broadcast_kv", [(2, 3, 4, 5), (1, 3, 4, 5), (1, 3, 4, 5)],
      lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True)),
    # ---- the GPT's fast path: q, k, v of every head packed in one (B, T, 3 * H * d) tensor
    C("packed_attention_causal", [(2, 4, 18)], lambda lib, qkv: packed_self_attention(lib, qkv, 3, is_causal=True)),
    C("packed_attention_mask_scale", [(3, 4, 12)],
      lambda lib, qkv: packed_self_attention(lib, qkv, 2, attn_mask=const(lib, qkv, MASK_44), scale=0.7)),
    # ================================================================ ops/conv.py
    # Tiny shapes, every argument exercised.
    C("conv2d_stride_padding", [(2, 2, 5, 4), (3, 2, 3, 2), (3,)],
      lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1)),
    C("conv2d_dilation_groups", [(1, 4, 5, 5), (4, 2, 2, 2)],
      lambda lib, x, w: F(lib).conv2d(x, w, stride=(1, 2), padding=(1, 0), dilation=2, groups=2)),
    C("conv2d_same", [(1, 2, 4, 4), (2, 2, 3, 2)], lambda lib, x, w: F(lib).conv2d(x, w, padding="same")),
    C("conv2d_unbatched", [(2, 4, 4), (1, 2, 2, 2)], lambda lib, x, w: F(lib).conv2d(x, w, stride=(1, 2))),
    C("conv1d", [(2, 2, 7), (4, 1, 3), (4,)],
      lambda lib, x, w, b: F(lib).conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)),
    C("conv_transpose2d", [(1, 2, 3, 3), (2, 3, 2, 3), (3,)],
      lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)),
    C("conv_transpose2d_groups_dilation", [(1, 4, 3, 2), (4, 1, 2, 2)],
      lambda lib, x, w: F(lib).conv_transpose2d(x, w, groups=2, dilation=2, stride=(2, 1))),
    # conv_transpose1d is conv_transpose2d on a height-1 image.
    C("conv_transpose1d", [(2, 4, 5), (4, 3, 3), (6,)], lambda lib, x, w, b: F(lib).conv_transpose1d(
        x, w, b, stride=2, padding=1, output_padding=1, groups=2)),
    # conv3d is a sum of conv2d over the depth taps: the cases check the composition.
    C("conv3d", [(1, 2, 4, 3, 4), (3, 2, 2, 2, 3), (3,)], lambda lib, x, w, b: F(lib).conv3d(
        x, w, b, stride=(2, 1, 1), padding=1, dilation=(1, 2, 1))),
    C("conv3d_groups_same", [(2, 4, 3, 3, 3), (2, 2, 3, 1, 3)],
      lambda lib, x, w: F(lib).conv3d(x, w, padding="same", groups=2)),
    C("unfold_im2col", [(2, 2, 4, 5)],
      lambda lib, x: F(lib).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
    C("unfold_im2col_unbatched_module", [(2, 3, 3)], lambda lib, x: lib.nn.Unfold(2)(x)),
    # ================================================================ ops/cross_entropy.py
    # The fused cross-entropy: class ids, no weight, no label smoothing.
    C("cross_entropy_mean", [(5, 4)], lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5))),
    C("cross_entropy_sum", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), reduction="sum")),
    C("cross_entropy_none", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), reduction="none")),
    C("cross_entropy_ignore_default", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5_IGNORED))),
    C("cross_entropy_ignore_index", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), ignore_index=2)),
    C("cross_entropy_ignore_none", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), reduction="none", ignore_index=2)),
    C("cross_entropy_ignore_sum", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), reduction="sum", ignore_index=2)),
    C("cross_entropy_3d", [(2, 4, 3)], lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_23))),
    C("cross_entropy_unbatched", [(4,)], lambda lib, x: F(lib).cross_entropy(x, const(lib, x, np.array(2)))),
    # ================================================================ ops/decompositions.py
    # Eigenvectors and singular vectors are defined up to sign (LAPACK's choice): they enter through
    # sign-invariant functions (squares).  Random matrices have distinct eigen- and singular values.
    C("det", [(2, 3, 3)], lambda lib, x: lib.linalg.det(x)),
    C("slogdet", [(2, 3, 3)], lambda lib, x: lib.linalg.slogdet(x).logabsdet * lib.linalg.slogdet(x).sign),
    C("logdet", [(3, 3)], lambda lib, x: lib.logdet(spd(lib, x))),
    C("inv", [(2, 3, 3)], lambda lib, x: lib.linalg.inv(shifted(lib, x))),
    C("solve_broadcast", [(2, 3, 3), (3, 2)], lambda lib, a, b: lib.linalg.solve(shifted(lib, a), b)),
    C("solve_vector_right", [(3, 3), (2, 3)], lambda lib, a, b: lib.linalg.solve(shifted(lib, a), b, left=False)),
    C("solve_triangular_upper", [(2, 3, 3), (3, 2)],
      lambda lib, a, b: lib.linalg.solve_triangular(shifted(lib, a), b, upper=True)),
    C("solve_triangular_unit_right", [(3, 3), (2, 3)],
      lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True)),
    C("triangular_solve_transpose", [(3, 2), (3, 3)],
      lambda lib, b, a: lib.linalg.solve_triangular(shifted(lib, a).mT, b, upper=True)
      + tg_or_torch_triangular_solve(lib, b, shifted(lib, a))),
    C("cholesky", [(2, 3, 3)], lambda lib, x: lib.linalg.cholesky(spd(lib, x))),
    C("cholesky_upper", [(3, 3)], lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True)),
    C("cholesky_solve", [(3, 2), (2, 3, 3)], lambda lib, b, x: lib.cholesky_solve(b, shifted(lib, x.tril()))),
    C("cholesky_inverse_upper", [(3, 3)], lambda lib, x: lib.cholesky_inverse(shifted(lib, x.triu()), upper=True)),
    C("eigh", [(2, 3, 3)], lambda lib, x: (lambda w, v: w.unsqueeze(-2) + v**2)(*lib.linalg.eigh(x + x.mT))),
    C("eigvalsh_upper", [(3, 3)], lambda lib, x: lib.linalg.eigvalsh(x + x.mT, UPLO="U")),
    C("svdvals", [(2, 4, 3)], lambda lib, x: lib.linalg.svdvals(x)),
    C("svd_tall", [(2, 4, 3)], lambda lib, x: (lambda u, s, vh: (u**2).sum(-1) + s.sum(-1, keepdim=True) + (
        vh**2).sum(-2).sum(-1, keepdim=True))(*lib.linalg.svd(x, full_matrices=False))),
    C("svd_wide_full", [(3, 5)], lambda lib, x: (lambda u, s, vh: (u**2).sum() * s + (vh[:3]**2).sum(0)[:3])(
        *lib.linalg.svd(x))),
    C("qr_tall", [(2, 4, 3)], lambda lib, x: (lambda q, r: q.sum(-1) + r.sum(-2).sum(-1, keepdim=True))(
        *lib.linalg.qr(x))),
    C("qr_wide", [(3, 5)], lambda lib, x: (lambda q, r: q.sum() + r)(*lib.linalg.qr(x))),
    C("pinv", [(2, 4, 3)], lambda lib, x: lib.linalg.pinv(x)),
    C("pinv_hermitian", [(3, 3)], lambda lib, x: lib.linalg.pinv(x + x.mT, hermitian=True)),
    C("matrix_power", [(3, 3)],
      lambda lib, x: lib.linalg.matrix_power(x, 3) + lib.linalg.matrix_power(shifted(lib, x), -2)),
    C("multi_dot", [(3,), (3, 4), (4, 2)], lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c])),
    # (cond's other p are norm(A) * norm(A^-1): PyTorch's backward of those fails, an in-place write of its own)
    C("cond", [(3, 3)], lambda lib, x: lib.linalg.cond(x) + lib.linalg.cond(shifted(lib, x), -2)),
    C("tensorinv", [(6, 6)], lambda lib, x: lib.linalg.tensorinv(shifted(lib, x).reshape(6, 2, 3), ind=1)),
    C("tensorsolve", [(6, 6), (2, 3)],
      lambda lib, x, b: lib.linalg.tensorsolve(shifted(lib, x).reshape(2, 3, 2, 3), b)),
    C("vander", [(2, 4)], lambda lib, x: lib.linalg.vander(x, N=5)),
    # matrix_exp: a 1-norm up to 6 takes the degree-13 Pade approximant alone; x 4 (up to 24) adds squarings
    C("matrix_exp", [(2, 3, 3)], lambda lib, x: lib.matrix_exp(x) + lib.linalg.matrix_exp(x * 4) / 100),
    C("householder_product", [(2, 4, 3), (2, 2)], lambda lib, a, tau: lib.linalg.householder_product(a, tau)),
    C("lstsq", [(2, 4, 3), (4, 2)], lambda lib, a, b: (lambda r: r.solution.sum(-2) + r.residuals)(
        lib.linalg.lstsq(a, b.expand(2, 4, 2), driver="gelsd"))),
    # ================================================================ ops/dropout.py
    # (no case: its mask is random; test_gradcheck_ops.py::test_gradcheck_dropout reseeds to check it)
    # ================================================================ ops/einsum.py
    C("einsum_bmm", [(2, 3, 4), (2, 4, 5)], lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b)),
    C("einsum_implicit_three", [(2, 3), (3, 4), (4,)], lambda lib, a, b, c: lib.einsum("ij,jk,k", a, b, c)),
    C("einsum_trace", [(3, 3)], lambda lib, a: lib.einsum("ii", a)),
    C("einsum_diagonal_outer", [(3, 3), (2,)], lambda lib, a, b: lib.einsum("ii,j->ij", a, b)),
    C("einsum_sum_only_here", [(2, 3, 4), (3,)], lambda lib, a, b: lib.einsum("ijk,j->i", a, b)),
    C("einsum_ellipsis_broadcast", [(2, 3, 4), (1, 3, 4)], lambda lib, a, b: lib.einsum("...ij,...ij->...i", a, b)),
    # tensordot and inner are einsums with the contracted labels spelled alike
    C("tensordot_int", [(2, 3, 4), (3, 4, 2)], lambda lib, a, b: lib.tensordot(a, b, 2)),
    C("tensordot_lists", [(2, 3, 4), (4, 2, 3)], lambda lib, a, b: lib.tensordot(a, b, ([1, 2], [2, 0]))),
    C("inner", [(2, 3), (4, 3)], lambda lib, a, b: lib.inner(a, b)),
    # ================================================================ ops/elementary.py
    # ---- unary
    C("exp", [(3, 4)], lambda lib, x: x.exp()),
    C("log", [(3, 4)], lambda lib, x: x.log(), domain="positive"),
    C("exp2", [(3, 4)], lambda lib, x: x.exp2()),
    C("log2_fn", [(3, 4)], lambda lib, x: lib.log2(x), domain="positive"),
    C("log10", [(3, 4)], lambda lib, x: x.log10(), domain="positive"),
    C("sqrt", [(3, 4)], lambda lib, x: x.sqrt(), domain="positive"),
    C("sin", [(3, 4)], lambda lib, x: x.sin()),
    C("cos_fn", [(3, 4)], lambda lib, x: lib.cos(x)),
    C("tan", [(3, 4)], lambda lib, x: (x * 0.7).tan()),  # |0.7 x| < 1.4 < pi / 2: no pole
    # Inverse functions on their open domains: |0.45 x| < 0.9 < 1, x + 1 > 1 for acosh.
    C("asin_acos_atan", [(3, 4)], lambda lib, x: (x * 0.45).asin() + lib.acos(x * 0.45) + lib.atan(x)),
    C("asinh_acosh_atanh", [(3, 4)], lambda lib, x: lib.asinh(x) + (x + 1).acosh() + lib.atanh(x * 0.45),
      domain="positive"),
    C("sinh_cosh", [(3, 4)], lambda lib, x: x.sinh() + lib.cosh(x)),
    C("expm1_log1p", [(3, 4)], lambda lib, x: lib.expm1(x) + (x * 0.45).log1p()),
    C("rsqrt_reciprocal", [(3, 4)], lambda lib, x: x.rsqrt() + lib.reciprocal(x), domain="positive"),
    C("reciprocal_negative", [(3, 4)], lambda lib, x: x.reciprocal(), domain="nonzero"),
    C("square", [(3, 4)], lambda lib, x: lib.square(x)),
    C("sinc", [(3, 4)], lambda lib, x: lib.sinc(x) + (x * 3).sinc()),
    C("deg2rad_rad2deg", [(3, 4)], lambda lib, x: lib.deg2rad(x * 100) + x.rad2deg()),
    C("logit", [(3, 4)], lambda lib, x: (x * 0.4).logit() + lib.logit(x * 0.4, eps=0.3), domain="positive"),
    # ================================================================ ops/embedding.py
    # embedding_bag: the Embedding op, then scatter_add / scatter_reduce into the bags (a composition).
    C("embedding_bag_offsets_mean", [(6, 3)], lambda lib, w: F(lib).embedding_bag(
        const(lib, w, IDS_25[0]), w, const(lib, w, np.array([0, 2, 2])), padding_idx=4)),
    C("embedding_bag_2d_sum_weights", [(6, 3), (2, 5)], lambda lib, w, p: F(lib).embedding_bag(
        const(lib, w, IDS_25), w, mode="sum", per_sample_weights=p)),
    C("embedding_bag_max_last_offset", [(6, 3)], lambda lib, w: F(lib).embedding_bag(
        const(lib, w, IDS_25[1]), w, const(lib, w, np.array([0, 3, 5])), mode="max", include_last_offset=True)),
    C("embedding", [(6, 3)], lambda lib, w: F(lib).embedding(const(lib, w, IDS_25), w)),
    # ================================================================ ops/indexing.py
    C("gather_dim0", [(3, 4)], lambda lib, x: x.gather(0, const(lib, x, IDX_G0))),
    C("gather_dim1_fn", [(3, 4)], lambda lib, x: lib.gather(x, -1, const(lib, x, IDX_G1))),
    C("scatter_src", [(2, 4), (2, 3)], lambda lib, x, s: x.scatter(1, const(lib, x, IDX_S1), s)),
    C("scatter_value", [(3, 4)], lambda lib, x: x.scatter(0, const(lib, x, IDX_G0), 1.5)),
    C("scatter_add", [(3, 4), (2, 4)], lambda lib, x, s: x.scatter_add(0, const(lib, x, IDX_G0), s)),
    C("scatter_reduce_sum", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "sum")),
    C("scatter_reduce_prod", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "prod")),
    C("scatter_reduce_mean", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "mean")),
    C("scatter_reduce_amax", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "amax")),
    C("scatter_reduce_amin_exclude_self", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "amin", include_self=False)),
    C("scatter_reduce_prod_exclude_self", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "prod", include_self=False)),
    C("scatter_reduce_mean_exclude_self", [(3, 4), (2, 4)],
      lambda lib, x, s: x.scatter_reduce(0, const(lib, x, IDX_G0), s, "mean", include_self=False)),
    C("index_select", [(4, 3)], lambda lib, x: x.index_select(0, const(lib, x, IDX_SEL))),
    C("index_select_fn_dim1", [(3, 4)], lambda lib, x: lib.index_select(x, 1, const(lib, x, IDX_SEL))),
    C("repeat_interleave", [(2, 3)], lambda lib, x: x.repeat_interleave(2, dim=1)),
    C("repeat_interleave_tensor", [(3, 2)], lambda lib, x: x.repeat_interleave(const(lib, x, REPEATS_3), dim=0)),
    C("repeat_interleave_flat", [(2, 3)], lambda lib, x: lib.repeat_interleave(x, 2)),
    # index_add / index_copy / index_reduce are scatter_add / scatter / scatter_reduce with the index spread over
    # whole slices; take, take_along_dim are an index and a gather; index_put with accumulate has its own op.
    C("index_add_alpha", [(3, 4), (3, 4)], lambda lib, x, s: x.index_add(0, const(lib, x, IDX_ADD), s, alpha=2)),
    C("index_copy_fn", [(3, 4), (2, 4)], lambda lib, x, s: lib.index_copy(x, 0, const(lib, x, IDX_COPY), s)),
    C("index_fill", [(3, 4)], lambda lib, x: x.index_fill(1, const(lib, x, IDX_COPY), -1.5)),
    C("index_reduce_prod", [(3, 4), (3, 4)],
      lambda lib, x, s: x.index_reduce(0, const(lib, x, IDX_ADD), s, "prod")),
    C("index_reduce_mean_exclude_self", [(4, 3), (4, 3)],
      lambda lib, x, s: lib.index_reduce(x, 1, const(lib, x, IDX_COPY[:1].repeat(3)), s[:, :3], "mean",
                                         include_self=False)),
    C("index_put_accumulate", [(3, 4), (3,)],
      lambda lib, x, v: x.index_put((const(lib, x, IDX_ADD), const(lib, x, IDX_ADD)), v, accumulate=True)),
    C("index_put_broadcast", [(3, 4), (4,)], lambda lib, x, v: lib.index_put(x, (const(lib, x, IDX_COPY),), v)),
    C("take", [(3, 4)], lambda lib, x: x.take(const(lib, x, IDX_TAKE))),
    C("take_along_dim", [(3, 4)], lambda lib, x: lib.take_along_dim(x, const(lib, x, IDX_ALONG), 1)),
    C("take_along_dim_broadcast", [(1, 4)], lambda lib, x: x.take_along_dim(const(lib, x, IDX_ALONG), dim=1)),
    # ================================================================ ops/inplace.py
    # In-place ops recorded in the graph; clamp's bounds and the division's divisor are away from
    # the inputs (kinks and poles further than eps=1e-6).
    C("iadd_", [(3, 4), (4,)], iadd),
    C("sub_alpha_", [(3, 4), (3, 1)], isub_alpha),
    C("imul_", [(3, 4), (3, 4)], imul),
    C("idiv_", [(3, 4), (4,)], idiv, domain="nonzero"),
    C("clamp_tensors_", [(3, 4), (4,), (3, 4)], clamp_tensors),
    C("setitem_row", [(3, 4), (4,)], setitem_row),
    C("setitem_rows", [(3, 4), (2, 4)], setitem_rows),
    C("iadd_mul_through_views", [(3, 4), (3,)], iadd_through_view),
    C("copy_fill_masked_fill_", [(3, 4), (2, 4)], copy_fill_mask),
    # ================================================================ ops/layernorm.py
    C("layer_norm", [(2, 3, 4)], lambda lib, x: F(lib).layer_norm(x, (4,))),
    C("layer_norm_affine", [(2, 3, 4), (4,), (4,)], lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b)),
    C("layer_norm_weight_only", [(3, 4), (4,)], lambda lib, x, w: F(lib).layer_norm(x, (4,), w)),
    C("layer_norm_2d", [(2, 3, 4)], lambda lib, x: F(lib).layer_norm(x, (3, 4))),
    C("layer_norm_2d_affine", [(2, 3, 4), (3, 4), (3, 4)],
      lambda lib, x, w, b: F(lib).layer_norm(x, (3, 4), w, b, eps=1e-3)),
    C("batch_norm_training", [(4, 3, 2), (3,), (3,)],
      lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, training=True)),
    C("batch_norm_eval", [(4, 3, 2, 2), (3,), (3,)], lambda lib, x, w, b: F(lib).batch_norm(
        x, const(lib, x, WEIGHTS_4[:3]), const(lib, x, POS_WEIGHT_4[:3]), w, b, eps=1e-3)),
    C("batch_norm_module", [(5, 3)], lambda lib, x: lib.nn.BatchNorm1d(3, dtype=x.dtype, device=x.device)(x)),
    C("instance_norm", [(2, 3, 4), (3,), (3,)], lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b)),
    C("instance_norm_module", [(2, 3, 2, 3)], lambda lib, x: lib.nn.InstanceNorm2d(3)(x)),
    C("group_norm", [(2, 4, 3), (4,), (4,)], lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b)),
    C("group_norm_module", [(2, 6, 2, 2)], lambda lib, x: lib.nn.GroupNorm(3, 6, dtype=x.dtype, device=x.device)(x)),
    C("rms_norm", [(2, 3, 4), (4,)], lambda lib, x, w: F(lib).rms_norm(x, (4,), w)),
    C("rms_norm_2d_eps", [(2, 3, 4)], lambda lib, x: F(lib).rms_norm(x, (3, 4), eps=1e-3)),
    C("rms_norm_module", [(3, 4)], lambda lib, x: lib.nn.RMSNorm(4, dtype=x.dtype, device=x.device)(x)),
    C("local_response_norm", [(2, 5, 3)], lambda lib, x: F(lib).local_response_norm(x, 3, alpha=0.5, k=2.0)),
    C("local_response_norm_module_4d", [(1, 4, 2, 3)], lambda lib, x: lib.nn.LocalResponseNorm(2, beta=0.5)(x)),
    # ================================================================ ops/linalg.py
    # Norms away from their kinks: no element is 0 (domain "nonzero"; |x|, the p < 1 norms), no tie for the max.
    C("cross_dim", [(3, 4), (3, 4)], lambda lib, a, b: lib.cross(a, b, dim=0)),
    C("linalg_cross_broadcast", [(2, 1, 3), (4, 3)], lambda lib, a, b: lib.linalg.cross(a, b.unsqueeze(0))),
    C("vector_norm_2", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x)),
    C("vector_norm_1_dim", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, 1, dim=1), domain="nonzero"),
    C("vector_norm_inf_keepdim", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, float("inf"), 0, keepdim=True)),
    C("vector_norm_neg_inf", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, -float("inf"), (0, 1))),
    C("vector_norm_p3", [(2, 3, 4)], lambda lib, x: lib.linalg.vector_norm(x, 3, dim=(0, 2)), domain="nonzero"),
    C("vector_norm_p_half", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, 0.5, dim=-1), domain="nonzero"),
    C("vector_norm_p1_5", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, 1.5), domain="nonzero"),
    C("vector_norm_0_times_x", [(3, 4)], lambda lib, x: lib.linalg.vector_norm(x, 0, dim=1) * x[:, 0]),
    C("norm_fro_dist", [(3, 4), (4,)], lambda lib, x, y: lib.norm(x, dim=1) + lib.dist(x, y, 3) + x.norm(p=1)),
    C("matrix_norm_fro_1", [(2, 3, 4)],
      lambda lib, x: lib.linalg.matrix_norm(x) + lib.linalg.matrix_norm(x, 1), domain="nonzero"),
    C("matrix_norm_inf_neg1", [(3, 4)],
      lambda lib, x: lib.linalg.norm(x, float("inf")) + lib.linalg.matrix_norm(x, -1, keepdim=True), domain="nonzero"),
    # singular values of random matrices: distinct (no tie for the max or min), so each is differentiable
    C("matrix_norm_nuc_2_neg2", [(2, 3, 4)], lambda lib, x: lib.linalg.matrix_norm(x, "nuc") + lib.linalg.matrix_norm(
        x, 2, dim=(0, 2)).sum() + lib.linalg.norm(x[0], -2) + x[1].norm(p="nuc")),
    C("linalg_norm_vector", [(3, 4)], lambda lib, x: lib.linalg.norm(x, dim=1) + lib.linalg.norm(x)),
    C("vecdot", [(3, 4), (4,)], lambda lib, x, y: lib.linalg.vecdot(x, y)),
    # ================================================================ ops/linear.py
    C("linear", [(2, 3, 4), (5, 4), (5,)], lambda lib, x, w, b: F(lib).linear(x, w, b)),
    C("linear_no_bias", [(3, 4), (2, 4)], lambda lib, x, w: F(lib).linear(x, w)),
    # bilinear is a composition (matmul, multiply, sum): the case checks it end to end.
    C("bilinear", [(2, 3, 4), (2, 3, 5), (6, 4, 5), (6,)], lambda lib, a, b, w, c: F(lib).bilinear(a, b, w, c)),
    # ================================================================ ops/losses.py
    # cross_entropy's extensions (weight, label smoothing, probabilities) are compositions around nll_loss.
    C("nll_loss_weight_ignore", [(5, 4)], lambda lib, x: F(lib).nll_loss(
        x.log_softmax(-1), const(lib, x, TARGETS_5_IGNORED), weight=const(lib, x, WEIGHTS_4))),
    C("nll_loss_3d_none", [(2, 4, 3)], lambda lib, x: F(lib).nll_loss(x, const(lib, x, TARGETS_23), reduction="none")),
    C("cross_entropy_label_smoothing", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5_IGNORED), label_smoothing=0.2)),
    C("cross_entropy_smoothing_weight_sum", [(5, 4)], lambda lib, x: F(lib).cross_entropy(
        x, const(lib, x, TARGETS_5_IGNORED), weight=const(lib, x, WEIGHTS_4), reduction="sum", label_smoothing=0.3)),
    C("cross_entropy_weight_mean", [(5, 4)],
      lambda lib, x: F(lib).cross_entropy(x, const(lib, x, TARGETS_5), weight=const(lib, x, WEIGHTS_4))),
    C("cross_entropy_probs", [(5, 4)], lambda lib, x: F(lib).cross_entropy(x, const(lib, x, PROBS_54))),
    C("cross_entropy_probs_smoothing_weight_none", [(5, 4)], lambda lib, x: F(lib).cross_entropy(
        x, const(lib, x, PROBS_54), weight=const(lib, x, WEIGHTS_4), reduction="none", label_smoothing=0.1)),
    C("cross_entropy_3d_smoothing_none", [(2, 4, 3)], lambda lib, x: F(lib).cross_entropy(
        x, const(lib, x, TARGETS_23), reduction="none", label_smoothing=0.25)),
    C("cross_entropy_loss_module", [(5, 4)],
      lambda lib, x: lib.nn.CrossEntropyLoss(label_smoothing=0.1)(x, const(lib, x, TARGETS_5))),
    C("nll_loss_module_sum", [(5, 4)],
      lambda lib, x: lib.nn.NLLLoss(reduction="sum")(x.log_softmax(1), const(lib, x, TARGETS_5))),
    C("binary_cross_entropy_weight", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).binary_cross_entropy(
        sigmoid(x), sigmoid(y), weight=const(lib, x, WEIGHTS_4))),
    C("bce_loss_module_none", [(3, 4)],
      lambda lib, x: lib.nn.BCELoss(reduction="none")(sigmoid(x), const(lib, x, PROBS_54[:3]))),
    C("bce_with_logits", [(3, 4), (3, 4)],
      lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x * 4, sigmoid(y))),
    C("bce_with_logits_pos_weight_sum", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(
        x * 4, sigmoid(y), weight=const(lib, x, WEIGHTS_4), reduction="sum", pos_weight=const(lib, x, POS_WEIGHT_4))),
    C("bce_with_logits_module", [(3, 4)], lambda lib, x: lib.nn.BCEWithLogitsLoss(
        pos_weight=const(lib, x, POS_WEIGHT_4))(x, const(lib, x, PROBS_54[:3]))),
    C("mse_loss", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).mse_loss(x, y)),
    C("mse_loss_module_none", [(3, 4), (3, 4)], lambda lib, x, y: lib.nn.MSELoss(reduction="none")(x, y)),
    C("l1_loss_sum", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).l1_loss(x, y, reduction="sum")),
    C("l1_loss_module", [(3, 4), (3, 4)], lambda lib, x, y: lib.nn.L1Loss()(x, y)),
    C("normalize", [(2, 3, 4)], lambda lib, x: F(lib).normalize(x)),
    C("normalize_p3_last", [(3, 4)], lambda lib, x: F(lib).normalize(x, p=3.0, dim=-1), domain="nonzero"),
    C("normalize_p1_dim0", [(3, 4)], lambda lib, x: F(lib).normalize(x, p=1, dim=0), domain="nonzero"),
    C("normalize_below_eps", [(3, 4)], lambda lib, x: F(lib).normalize(x * 1e-7, dim=1, eps=1e-5)),
    # The losses below (after kl_div and huber/smooth L1, ops of their own) and the distances are
    # compositions: the case checks the composition's gradient end to end, PNorm's backward included.
    C("kl_div_batchmean", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).kl_div(
        x.log_softmax(-1), y.softmax(-1), reduction="batchmean")),
    C("kl_div_log_target_none", [(3, 4), (3, 4)],
      lambda lib, x, y: F(lib).kl_div(x, y.log_softmax(-1), reduction="none", log_target=True)),
    C("kl_div_zero_target_sum", [(3, 4)],
      lambda lib, x: F(lib).kl_div(x, const(lib, x, PROBS_54[:3]), reduction="sum")),
    C("huber_loss", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).huber_loss(x, y)),
    C("huber_loss_delta_sum", [(3, 4), (3, 4)],
      lambda lib, x, y: F(lib).huber_loss(x, y, reduction="sum", delta=0.5)),
    C("smooth_l1_loss_beta", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).smooth_l1_loss(x, y, beta=0.7)),
    C("smooth_l1_loss_beta0_none", [(3, 4), (3, 4)],
      lambda lib, x, y: F(lib).smooth_l1_loss(x, y, reduction="none", beta=0.0)),
    C("soft_margin_loss", [(3, 4)], lambda lib, x: F(lib).soft_margin_loss(x * 3, const(lib, x, SIGNS_34))),
    C("margin_ranking_loss", [(3,), (3,)],
      lambda lib, x, y: F(lib).margin_ranking_loss(x, y, const(lib, x, SIGNS_3), margin=0.3)),
    C("hinge_embedding_loss", [(3, 4)],
      lambda lib, x: F(lib).hinge_embedding_loss(x, const(lib, x, SIGNS_34), margin=0.5, reduction="sum")),
    C("cosine_embedding_loss", [(3, 4), (3, 4)],
      lambda lib, x, y: F(lib).cosine_embedding_loss(x, y, const(lib, x, SIGNS_3), margin=-0.5)),
    C("poisson_nll_loss_full", [(3, 4)],
      lambda lib, x: F(lib).poisson_nll_loss(x, const(lib, x, COUNTS_34), full=True)),
    C("poisson_nll_loss_rate", [(3, 4)],
      lambda lib, x: F(lib).poisson_nll_loss(x, const(lib, x, COUNTS_34), log_input=False, reduction="sum"),
      domain="positive"),
    C("gaussian_nll_loss", [(3, 4), (3, 4), (3, 4)],
      lambda lib, x, y, v: F(lib).gaussian_nll_loss(x, y, v, full=True), domain="positive"),
    C("gaussian_nll_loss_shared_var", [(3, 4), (3, 4), (3, 1)],
      lambda lib, x, y, v: F(lib).gaussian_nll_loss(x, y, v, reduction="none"), domain="positive"),
    C("triplet_margin_loss_swap", [(3, 4), (3, 4), (3, 4)],
      lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2.0, swap=True)),
    C("triplet_margin_loss_p1", [(3, 4), (3, 4), (3, 4)],
      lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=3.0, p=1)),
    C("multilabel_soft_margin_loss", [(3, 4), (4,)], lambda lib, x, w: F(lib).multilabel_soft_margin_loss(
        x, const(lib, x, (SIGNS_34 + 1) / 2), weight=w)),
    C("multi_margin_loss_p2_weight", [(5, 4)], lambda lib, x: F(lib).multi_margin_loss(
        x, const(lib, x, TARGETS_5), p=2, margin=0.8, weight=const(lib, x, WEIGHTS_4))),
    C("multi_margin_loss_module_none", [(5, 4)],
      lambda lib, x: lib.nn.MultiMarginLoss(reduction="none")(x, const(lib, x, TARGETS_5))),
    C("multilabel_margin_loss", [(2, 4)], lambda lib, x: F(lib).multilabel_margin_loss(
        x, const(lib, x, LABELS_24))),
    C("multilabel_margin_loss_module_1d", [(4,)],
      lambda lib, x: lib.nn.MultiLabelMarginLoss()(x, const(lib, x, LABELS_24[1]))),
    C("loss_modules", [(3, 4), (3, 4)], lambda lib, x, y: lib.nn.KLDivLoss(reduction="batchmean")(
        x.log_softmax(-1), y.softmax(-1)) + lib.nn.HuberLoss(delta=0.5)(x, y) + lib.nn.SmoothL1Loss(beta=2.0)(x, y)
        + lib.nn.SoftMarginLoss()(x, const(lib, x, SIGNS_34)) + lib.nn.MarginRankingLoss(0.1)(
        x[0], y[0], const(lib, x, SIGNS_34[0])) + lib.nn.HingeEmbeddingLoss()(x, const(lib, x, SIGNS_34))
        + lib.nn.CosineEmbeddingLoss(0.1)(x, y, const(lib, x, SIGNS_3)) + lib.nn.PoissonNLLLoss()(
        x, const(lib, x, COUNTS_34)) + lib.nn.GaussianNLLLoss()(x, y, x * x + 0.5)
        + lib.nn.TripletMarginLoss(1.5)(x, y, x.flip(0)) + lib.nn.MultiLabelSoftMarginLoss()(
        x, const(lib, x, (SIGNS_34 + 1) / 2))),
    C("cosine_similarity", [(3, 4), (4,)], lambda lib, x, y: F(lib).cosine_similarity(x, y, dim=-1)),
    C("cosine_similarity_dim0", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).cosine_similarity(x, y, dim=0)),
    C("pairwise_distance", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).pairwise_distance(x, y)),
    C("pairwise_distance_p3_keepdim", [(3, 4), (4,)],
      lambda lib, x, y: F(lib).pairwise_distance(x, y, p=3.0, keepdim=True)),
    C("pairwise_distance_inf", [(3, 4), (3, 4)], lambda lib, x, y: F(lib).pairwise_distance(x, y, p=float("inf"))),
    C("pdist", [(4, 3)], lambda lib, x: F(lib).pdist(x)),
    C("pdist_p1", [(4, 3)], lambda lib, x: F(lib).pdist(x, p=1)),
    C("pdist_p_half", [(4, 3)], lambda lib, x: F(lib).pdist(x, p=0.5)),
    C("distance_modules", [(3, 4), (3, 4)], lambda lib, x, y: lib.nn.CosineSimilarity(dim=1)(x, y)
      + lib.nn.PairwiseDistance(p=1.5)(x, y)),
    # PyTorch's norms below 1: the p < 1 branch of the backward (no zero entries: its masked case is
    # in tests/test_errors.py), and p = 0, the count of nonzeros, a constant norm
    C("normalize_p_half", [(3, 4)], lambda lib, x: F(lib).normalize(x, p=0.5, dim=1), domain="nonzero"),
    C("normalize_p_negative", [(3, 4)], lambda lib, x: F(lib).normalize(x, p=-1.0, dim=1), domain="nonzero"),
    C("normalize_p0", [(3, 4)], lambda lib, x: F(lib).normalize(x, p=0, dim=1), domain="nonzero"),
    # ================================================================ ops/masking.py
    C("where", [(3, 4), (3, 4)], lambda lib, x, y: lib.where(const(lib, x, COND_34), x, y)),
    C("where_broadcast", [(3, 1), (4,)], lambda lib, x, y: lib.where(const(lib, x, COND_34), x, y)),
    C("where_scalar", [(3, 4)], lambda lib, x: lib.where(const(lib, x, COND_34), x, 0.0)),
    C("masked_fill", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_34), 0.5)),
    C("masked_fill_broadcast", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_4), -3.0)),
    C("tril", [(2, 3, 4)], lambda lib, x: x.tril(1)),
    C("triu_fn", [(3, 4)], lambda lib, x: lib.triu(x, -1)),
    # ================================================================ ops/matmul.py
    C("matmul_2d", [(3, 4), (4, 5)], lambda lib, x, y: x @ y),
    C("matmul_batched", [(2, 3, 4), (2, 4, 5)], lambda lib, x, y: x @ y),
    C("matmul_broadcast_batch", [(2, 1, 3, 4), (5, 4, 2)], lambda lib, x, y: x @ y),
    C("matmul_1d_left", [(4,), (2, 4, 3)], lambda lib, x, y: x @ y),
    C("matmul_1d_right", [(3, 4), (4,)], lambda lib, x, y: x @ y),
    C("matmul_1d_both", [(4,), (4,)], lambda lib, x, y: x @ y),
    C("matmul_fn", [(3, 4), (4, 2)], lambda lib, x, y: lib.matmul(x, y)),
    # The products spelled through matmul (mm, bmm, mv, dot) and the fused beta * input + alpha * product forms
    C("mm_bmm_mv_dot", [(3, 4), (4, 2), (2, 3, 4), (2, 4, 2), (4,)],
      lambda lib, a, b, p, q, v: lib.mm(a, b).sum() + p.bmm(q) + lib.mv(a, v).sum() + lib.dot(v, v) + lib.vdot(v, v)),
    C("addmm_beta_alpha", [(3, 2), (3, 4), (4, 2)], lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2)),
    C("addmm_broadcast", [(2,), (3, 4), (4, 2)], lambda lib, c, a, b: c.addmm(a, b)),
    C("addmv_addr", [(3,), (3, 4), (4,), (3, 4)],
      lambda lib, c, a, v, m: lib.addmv(c, a, v, alpha=-1) + lib.addr(m, c, v, beta=2).sum(1)),
    C("baddbmm_addbmm", [(3, 2), (2, 3, 4), (2, 4, 2)],
      lambda lib, c, p, q: lib.baddbmm(c, p, q, beta=-1) + lib.addbmm(c, p, q, alpha=0.5)),
    # beta = 0 leaves input out of the sum (tensorgrad: no gradient; PyTorch: a zero one): `+ c` gives c one
    C("addmm_beta_zero", [(3, 2), (3, 4), (4, 2)], lambda lib, c, a, b: lib.addmm(c, a, b, beta=0) + c),
    C("outer_kron", [(3,), (2,), (2, 3)],
      lambda lib, a, b, m: lib.outer(a, b).sum() + lib.kron(m, m) + lib.kron(a, m).sum()),
    # ================================================================ ops/pad.py
    C("pad_constant", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, (1, 2, 0, 1), value=0.5)),
    C("pad_constant_crop", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, (-1, 2, 1, -2))),
    C("pad_reflect", [(1, 2, 3, 4)], lambda lib, x: F(lib).pad(x, (2, 3, 2, 1), mode="reflect")),
    C("pad_replicate", [(2, 3, 4)], lambda lib, x: F(lib).pad(x, (3, 1), mode="replicate")),
    C("pad_circular", [(1, 2, 3, 4)], lambda lib, x: F(lib).pad(x, (1, 4, 3, 2), mode="circular")),
    # ================================================================ ops/pool.py
    # Tiny shapes, every argument exercised.
    C("max_pool2d", [(1, 2, 5, 5)], lambda lib, x: F(lib).max_pool2d(x, 2)),
    C("max_pool2d_overlap_padding_ceil", [(1, 2, 6, 5)],
      lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    C("max_pool2d_dilation", [(2, 1, 5, 5)], lambda lib, x: F(lib).max_pool2d(x, 2, stride=1, dilation=2)),
    C("max_pool2d_module", [(1, 2, 4, 4)], lambda lib, x: lib.nn.MaxPool2d(3, 1)(x)),
    C("avg_pool2d", [(1, 2, 5, 4)], lambda lib, x: F(lib).avg_pool2d(x, 2)),
    C("avg_pool2d_padding_ceil_exclude", [(1, 2, 5, 5)],
      lambda lib, x: F(lib).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    C("avg_pool2d_divisor_module", [(1, 1, 4, 5)],
      lambda lib, x: lib.nn.AvgPool2d((2, 3), stride=1, divisor_override=4)(x)),
    C("max_pool1d", [(2, 3, 7)], lambda lib, x: F(lib).max_pool1d(x, 3, stride=2, padding=1, ceil_mode=True)),
    C("avg_pool1d_unbatched", [(3, 6)], lambda lib, x: F(lib).avg_pool1d(x, 2, padding=1, count_include_pad=False)),
    C("pool1d_modules", [(2, 2, 9)], lambda lib, x: lib.nn.AvgPool1d(2)(lib.nn.MaxPool1d(2, 1, dilation=2)(x))),
    # The adaptive poolings are compositions (a product with a constant averaging matrix; a max over
    # gathered windows): the cases check their gradients end to end.
    C("adaptive_avg_pool1d", [(2, 3, 7)], lambda lib, x: F(lib).adaptive_avg_pool1d(x, 3)),
    C("adaptive_avg_pool2d", [(1, 2, 5, 7)], lambda lib, x: F(lib).adaptive_avg_pool2d(x, (3, None))),
    C("adaptive_max_pool1d", [(3, 7)], lambda lib, x: F(lib).adaptive_max_pool1d(x, 4)),
    C("adaptive_max_pool2d", [(1, 2, 5, 6)], lambda lib, x: F(lib).adaptive_max_pool2d(x, (2, 4))),
    # max_pool3d and avg_pool3d gather their windows by indexing (a composition).
    C("max_pool3d", [(1, 2, 4, 5, 4)], lambda lib, x: F(lib).max_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                                                        dilation=(1, 1, 2), ceil_mode=True)),
    C("avg_pool3d_exclude_pad", [(1, 2, 4, 5, 3)], lambda lib, x: F(lib).avg_pool3d(
        x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    C("pool3d_modules", [(2, 4, 4, 5)], lambda lib, x: lib.nn.AvgPool3d(2, 1, divisor_override=3)(
        lib.nn.MaxPool3d(2, 1)(x))),
    C("adaptive_max_pool3d_module", [(2, 3, 5, 4)], lambda lib, x: lib.nn.AdaptiveMaxPool3d((2, None, 3))(x)),
    C("adaptive_avg_pool3d", [(1, 2, 3, 5, 4)], lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3, None))),
    C("max_unpool2d", [(1, 2, 4, 5)], lambda lib, x: F(lib).max_unpool2d(
        *F(lib).max_pool2d(x, 2, return_indices=True), 2, output_size=(5, 5))),
    C("max_unpool1d_module", [(2, 2, 6)], lambda lib, x: lib.nn.MaxUnpool1d(3, 2)(
        *F(lib).max_pool1d(x, 3, 2, return_indices=True))),
    C("adaptive_pool_modules", [(2, 5, 6)], lambda lib, x: lib.nn.AdaptiveMaxPool2d(3)(x)
      + lib.nn.AdaptiveAvgPool2d((3, 3))(x) + lib.nn.AdaptiveAvgPool1d(3)(x[:, :3])
      + lib.nn.AdaptiveMaxPool1d(3)(x[:, 1:4])),
    # ================================================================ ops/rearrange.py
    C("repeat", [(2, 3)], lambda lib, x: x.repeat(2, 1, 2)),
    C("tile_fn", [(2, 3)], lambda lib, x: lib.tile(x, (2,))),
    C("flip", [(2, 3, 4)], lambda lib, x: x.flip(0, 2)),
    C("roll", [(3, 4)], lambda lib, x: x.roll((1, -3), (0, 1))),
    C("roll_flat", [(3, 4)], lambda lib, x: lib.roll(x, 5)),
    C("diagonal", [(3, 4)], lambda lib, x: x.diagonal()),
    C("diagonal_offset_dims", [(2, 3, 4)], lambda lib, x: lib.diagonal(x, -1, 2, 1)),
    C("unfold", [(2, 7)], lambda lib, x: x.unfold(1, 3, 2)),
    C("unfold_overlap", [(5, 2)], lambda lib, x: x.unfold(0, 3, 1)),
    C("diag_embed", [(2, 3)], lambda lib, x: lib.diag_embed(x)),
    C("diag_embed_offset_dims", [(2, 3)], lambda lib, x: x.diag_embed(-1, 0, 2)),
    C("diag_diagflat", [(3,), (3, 4)], lambda lib, v, m: lib.diag(v, 1)[:3, :3] + lib.diag(m, -1).sum() + v.diagflat()),
    C("trace", [(3, 4)], lambda lib, x: x.trace()),
    C("rot90_flips", [(2, 3, 4)],
      lambda lib, x: lib.rot90(x, 1, (1, 2)).sum(0) + x.rot90(3, [2, 1]).sum(0) + lib.rot90(x, 2).fliplr().sum(0).T
      + lib.flipud(x).sum(0).T),
    # ================================================================ ops/reduce.py
    # prod also runs on inputs with exact zeros (domain "zeros": one or two per slice), where a
    # backward that divides by x fails; products are polynomials, smooth there, so the central
    # differences hold.  amin_ties builds a tie on purpose (a column repeated by cat; finite
    # differences move both copies together, so any split of the gradient between them sums to the
    # same number).
    C("sum_all", [(2, 3, 4)], lambda lib, x: x.sum()),
    C("sum_dim", [(2, 3, 4)], lambda lib, x: x.sum(1)),
    C("sum_neg_dim_keepdim", [(2, 3, 4)], lambda lib, x: x.sum(-1, keepdim=True)),
    C("sum_tuple_keepdim", [(2, 3, 4)], lambda lib, x: x.sum((0, 2), keepdim=True)),
    C("sum_tuple", [(2, 3, 4)], lambda lib, x: x.sum((0, -1))),
    C("mean_all", [(2, 3, 4)], lambda lib, x: x.mean()),
    C("mean_dim", [(2, 3, 4)], lambda lib, x: x.mean(1)),
    C("mean_tuple_keepdim", [(2, 3, 4)], lambda lib, x: x.mean((0, 2), keepdim=True)),
    C("amax_all", [(2, 3, 4)], lambda lib, x: x.amax()),
    C("amax_dim", [(2, 3, 4)], lambda lib, x: x.amax(1)),
    C("amax_tuple_keepdim", [(2, 3, 4)], lambda lib, x: x.amax((0, 2), keepdim=True)),
    C("max_all", [(2, 3, 4)], lambda lib, x: x.max()),
    C("min_all", [(2, 3, 4)], lambda lib, x: x.min()),
    C("amin_dim", [(2, 3, 4)], lambda lib, x: x.amin(1)),
    C("amin_tuple_keepdim_fn", [(2, 3, 4)], lambda lib, x: lib.amin(x, (0, 2), keepdim=True)),
    C("amin_ties", [(3, 4)], lambda lib, x: lib.cat([x, x], 1).amin(1)),
    C("var_all", [(2, 3, 4)], lambda lib, x: x.var()),
    C("var_dim", [(2, 3, 4)], lambda lib, x: x.var(1)),
    C("var_tuple_keepdim", [(2, 3, 4)], lambda lib, x: x.var((0, 2), keepdim=True)),
    C("var_biased", [(2, 3, 4)], lambda lib, x: x.var(-1, correction=0)),
    C("std_all", [(2, 3, 4)], lambda lib, x: x.std()),
    C("std_dim", [(2, 3, 4)], lambda lib, x: x.std(1)),
    C("std_tuple_keepdim_biased", [(2, 3, 4)], lambda lib, x: x.std((0, 2), keepdim=True, correction=0)),
    C("std_axis_fn", [(3, 4)], lambda lib, x: lib.std(x, axis=1)),
    C("std_mean", [(2, 3, 4)], lambda lib, x: lib.std_mean(x, dim=1)),
    C("var_mean_unbiased_false", [(3, 4)], lambda lib, x: lib.var_mean(x, 0, unbiased=False, keepdim=True)),
    C("prod_all", [(2, 3)], lambda lib, x: x.prod()),
    C("prod_dim", [(2, 3, 4)], lambda lib, x: x.prod(1)),
    C("prod_dim_keepdim_fn", [(3, 4)], lambda lib, x: lib.prod(x, -1, keepdim=True)),
    C("prod_dim_zeros", [(3, 4)], lambda lib, x: x.prod(1), domain="zeros"),  # rows with two, one, one zero
    C("prod_all_one_zero", [(2,)], lambda lib, x: x.prod(), domain="zeros"),
    C("prod_all_two_zeros", [(2, 3)], lambda lib, x: x.prod(), domain="zeros"),
    C("logsumexp", [(3, 5)], lambda lib, x: x.logsumexp(-1)),
    C("logsumexp_tuple_keepdim_fn", [(2, 3, 4)], lambda lib, x: lib.logsumexp(x * 200, (0, 2), keepdim=True)),
    C("sum_mean_axis", [(2, 3, 4)], lambda lib, x: x.sum(axis=1) + lib.mean(x, axis=(1,)) + x.amax(axis=1)),
    C("sum_dtype", [(3, 4)], lambda lib, x: x.to(lib.float32).sum(1, dtype=lib.float64),
      gradcheck={"eps": 1e-2, "atol": 1e-4}),  # the float32 step rounds: a wide eps (as cast_f32_f64)
    # NaN-skipping reductions: NaN written in by masked_fill (MASK_34: two, one and one per row), whose
    # gradient is 0 there, as the finite differences see (those entries are not the inputs' any more);
    # a NaN in a leaf itself is tests/test_properties_statistics.py's.
    C("nansum_dim", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NAN).nansum(1)),
    C("nansum_all_fn", [(3, 4)], lambda lib, x: lib.nansum(x.masked_fill(const(lib, x, MASK_34), NAN))),
    C("nanmean_dim_keepdim", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NAN).nanmean(1, True)),
    C("nanmean_tuple_fn", [(2, 3, 4)], lambda lib, x: lib.nanmean(x, (0, 2))),
    C("aminmax_dim", [(3, 4)], lambda lib, x: lib.aminmax(x, dim=1)),
    C("aminmax_all_keepdim", [(2, 3)], lambda lib, x: x.aminmax(keepdim=True)),
    # cov and corrcoef: sums and a matmul; the weights' gradient is checked too (aweights > 0).
    C("cov", [(3, 5)], lambda lib, x: lib.cov(x)),
    C("cov_1d_correction0", [(6,)], lambda lib, x: x.cov(correction=0)),
    C("cov_weights", [(2, 4), (4,)],
      lambda lib, x, a: x.cov(fweights=const(lib, x, FWEIGHTS_4), aweights=a.abs() + 0.5)),
    C("corrcoef", [(3, 5)], lambda lib, x: lib.corrcoef(x)),
    # renorm: rows above maxnorm scaled (through their norm), the others passed through.
    C("renorm_p2", [(3, 4)], lambda lib, x: x.renorm(2, 0, 1.5)),
    C("renorm_p1_dim1", [(3, 4)], lambda lib, x: lib.renorm(x, 1, 1, 2.5)),
    C("renorm_inf_3d", [(2, 3, 2)], lambda lib, x: x.renorm(float("inf"), -1, 1.0)),
    C("renorm_p3", [(3, 4)], lambda lib, x: x.renorm(3, 0, 1.0)),
    # the trapezoidal rule: sums of y weighted by the spacings
    C("trapezoid", [(3, 5)], lambda lib, y: lib.trapezoid(y)),
    C("trapezoid_dx", [(3, 5)], lambda lib, y: lib.trapezoid(y, dx=0.5)),
    C("trapezoid_x", [(3, 5), (5,)], lambda lib, y, x: lib.trapezoid(y, x)),
    C("trapz_x_dim0", [(4, 3), (4, 3)], lambda lib, y, x: lib.trapz(y, x, dim=0)),
    # ================================================================ ops/scan.py
    # cumprod also runs on inputs with exact zeros (domain "zeros"), as prod in ops/reduce.py.
    C("cumsum", [(3, 5)], lambda lib, x: x.cumsum(1)),
    C("cumsum_fn_dim0", [(3, 4, 2)], lambda lib, x: lib.cumsum(x, dim=0)),
    C("cumprod", [(3, 5)], lambda lib, x: x.cumprod(-1)),
    C("cumprod_fn_dim0", [(4, 3)], lambda lib, x: lib.cumprod(x, 0)),
    C("cumprod_zeros", [(3, 4)], lambda lib, x: x.cumprod(1), domain="zeros"),
    C("logcumsumexp", [(3, 5)], lambda lib, x: x.logcumsumexp(1)),
    C("logcumsumexp_fn_spread", [(4, 3)], lambda lib, x: lib.logcumsumexp(x * 100, dim=0)),
    C("cumulative_trapezoid", [(3, 5)], lambda lib, y: lib.cumulative_trapezoid(y, dx=2.0)),
    C("cumulative_trapezoid_x", [(3, 5), (1, 5)], lambda lib, y, x: lib.cumulative_trapezoid(y, x)),
    # ================================================================ ops/selection.py
    # Inputs are distinct random values, so no max or sort ties except where a case builds one on
    # purpose (*_ties: a column repeated by cat; finite differences move both copies together, so
    # any split of the gradient between them sums to the same number).  cummax/cummin: distinct
    # inputs, no ties.  Integer outputs (indices) are compared with PyTorch too; they carry no gradient.
    C("topk", [(3, 5)], lambda lib, x: x.topk(2)),
    C("topk_smallest_dim0", [(4, 3)], lambda lib, x: x.topk(3, dim=0, largest=False)),
    C("topk_3d_fn", [(2, 3, 4)], lambda lib, x: lib.topk(x, 1, dim=1)),
    C("sort", [(3, 5)], lambda lib, x: x.sort()),
    C("sort_descending_dim0", [(4, 3)], lambda lib, x: x.sort(0, descending=True)),
    C("sort_fn_stable", [(2, 3, 4)], lambda lib, x: lib.sort(x, dim=1, stable=True)),
    C("argsort_times_x", [(3, 5)], lambda lib, x: x * x.argsort(-1, descending=True)),
    C("max_values", [(2, 3, 4)], lambda lib, x: x.max(-1).values),
    C("max_dim_keepdim", [(2, 3, 4)], lambda lib, x: x.max(0, keepdim=True)),
    C("max_dim_ties", [(3, 4)], lambda lib, x: lib.cat([x, x[:, :1]], 1).max(1)),
    C("max_other", [(3, 4), (4,)], lambda lib, x, y: x.max(y)),
    C("min_dim", [(2, 3, 4)], lambda lib, x: x.min(-1)),
    C("min_dim_ties", [(3, 4)], lambda lib, x: lib.cat([x[:, 1:2], x], 1).min(1)),
    C("min_fn", [(2, 3)], lambda lib, x: lib.min(x, 0)),
    C("argmin_times_x", [(3, 4)], lambda lib, x: x * x.argmin(0) + lib.argmin(x)),
    C("maximum", [(3, 4), (3, 4)], lambda lib, x, y: lib.maximum(x, y)),
    C("maximum_broadcast", [(3, 1), (4,)], lambda lib, x, y: x.maximum(y)),
    C("minimum", [(3, 4), (3, 4)], lambda lib, x, y: lib.minimum(x, y)),
    C("minimum_broadcast", [(2, 3, 4), (3, 1)], lambda lib, x, y: x.minimum(y)),
    C("cummax", [(3, 5)], lambda lib, x: x.cummax(1)),
    C("cummin_fn_dim0", [(4, 3)], lambda lib, x: lib.cummin(x, 0)),
    # Order statistics.  median/mode/kthvalue(dim) send the gradient to the selected index; median()
    # shares it among equal values (median_all_ties: the copies of one variable move together).
    # quantile's ranks (q (n - 1)) land away from integers, where the interpolation weight would
    # jump for 'nearest' and the neighbours change: q = 0.3, 0.65, 0.4 with n = 4, 5; a tensor q is
    # a sigmoid of a random input (in (0.12, 0.88)), its gradient checked too.
    C("median_dim", [(3, 5)], lambda lib, x: x.median(1)),
    C("median_even_keepdim_fn", [(4, 3)], lambda lib, x: lib.median(x, 0, keepdim=True)),
    C("median_all", [(3, 4)], lambda lib, x: x.median()),
    C("median_all_ties", [(2, 3)], lambda lib, x: lib.cat([x, x]).median()),
    C("nanmedian_nan_dim", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NAN).nanmedian(1)),
    C("nanmedian_nan_all_fn", [(3, 4)], lambda lib, x: lib.nanmedian(x.masked_fill(const(lib, x, MASK_34), NAN))),
    C("mode", [(3, 5)], lambda lib, x: x.mode()),
    C("mode_ties_fn", [(3, 4)], lambda lib, x: lib.mode(lib.cat([x, x[:, 1:2]], 1), 1)),
    C("kthvalue", [(3, 5)], lambda lib, x: x.kthvalue(2)),
    C("kthvalue_dim0_keepdim_fn", [(4, 3)], lambda lib, x: lib.kthvalue(x, 4, 0, keepdim=True)),
    C("msort", [(4, 3)], lambda lib, x: lib.msort(x)),
    C("quantile_dim", [(3, 5)], lambda lib, x: x.quantile(0.3, dim=1)),
    C("quantile_all_keepdim_fn", [(2, 3)], lambda lib, x: lib.quantile(x, 0.65, keepdim=True)),
    C("quantile_q_tensor", [(4, 5), (3,)], lambda lib, x, q: lib.quantile(x, q.sigmoid(), dim=0)),
    C("quantile_lower", [(3, 5)], lambda lib, x: x.quantile(0.4, -1, interpolation="lower")),
    C("quantile_higher", [(3, 5)], lambda lib, x: x.quantile(0.4, -1, interpolation="higher")),
    C("quantile_nearest", [(3, 5)], lambda lib, x: x.quantile(0.4, -1, interpolation="nearest")),
    C("quantile_midpoint_q_tensor", [(4, 3)],  # q's weight is 1/2 whatever q: a constant q (no gradient)
      lambda lib, x: x.quantile(const(lib, x, np.array([0.3, 0.7])), 0, True, interpolation="midpoint")),
    C("nanquantile_nan", [(3, 4)],
      lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NAN).nanquantile(0.4, dim=1)),
    C("nanquantile_q_tensor_fn", [(4, 3), (2,)],
      lambda lib, x, q: lib.nanquantile(x.masked_fill(const(lib, x, MASK_34.T), NAN), q.sigmoid(), 0)),
    # ================================================================ ops/shape.py
    # interpolate is index_select (ops/shape.py) and weighted sums: the cases check the composition.
    C("interpolate_nearest", [(1, 2, 3, 4)], lambda lib, x: F(lib).interpolate(x, size=(5, 3))),
    C("interpolate_nearest_exact_scale", [(2, 1, 4)], lambda lib, x: F(lib).interpolate(
        x, scale_factor=1.7, mode="nearest-exact")),
    C("interpolate_linear", [(2, 2, 5)], lambda lib, x: F(lib).interpolate(x, size=8, mode="linear")),
    C("interpolate_bilinear_align_corners", [(1, 2, 3, 4)], lambda lib, x: F(lib).interpolate(
        x, scale_factor=(2.0, 0.75), mode="bilinear", align_corners=True)),
    C("interpolate_bicubic", [(1, 1, 4, 3)], lambda lib, x: F(lib).interpolate(x, size=(5, 6), mode="bicubic")),
    C("interpolate_trilinear", [(1, 1, 2, 3, 2)], lambda lib, x: F(lib).interpolate(
        x, scale_factor=1.5, mode="trilinear")),
    C("interpolate_area", [(1, 2, 5, 4)], lambda lib, x: F(lib).interpolate(x, size=(2, 3), mode="area")),
    C("upsample_modules", [(1, 1, 2, 3)], lambda lib, x: lib.nn.UpsamplingBilinear2d(scale_factor=2)(x)
      + lib.nn.UpsamplingNearest2d(size=(4, 6))(x) + lib.nn.Upsample(scale_factor=2, mode="bicubic")(x)),
    C("pixel_shuffle", [(2, 8, 2, 3)], lambda lib, x: F(lib).pixel_shuffle(x, 2)),
    C("pixel_unshuffle_unbatched", [(2, 4, 6)], lambda lib, x: F(lib).pixel_unshuffle(x, 2)),
    C("channel_shuffle", [(2, 6, 2)], lambda lib, x: F(lib).channel_shuffle(x, 3)),
    C("pixel_modules", [(1, 4, 2, 2)], lambda lib, x: lib.nn.Sequential(
        lib.nn.PixelShuffle(2), lib.nn.PixelUnshuffle(2), lib.nn.ChannelShuffle(2))(x)),
    # ---- reshape, permute, expand
    C("reshape", [(2, 3, 4)], lambda lib, x: x.reshape(6, 4)),
    C("reshape_infer", [(2, 3, 4)], lambda lib, x: x.reshape((4, -1))),
    C("view", [(2, 3, 4)], lambda lib, x: x.view(-1)),
    C("transpose", [(2, 3, 4)], lambda lib, x: x.transpose(0, 2)),
    C("transpose_neg", [(2, 3, 4)], lambda lib, x: x.transpose(-1, -2)),
    C("T", [(3, 4)], lambda lib, x: x.T),
    C("permute", [(2, 3, 4)], lambda lib, x: x.permute(2, 0, 1)),
    C("unsqueeze", [(3, 4)], lambda lib, x: x.unsqueeze(1)),
    C("unsqueeze_neg", [(3, 4)], lambda lib, x: x.unsqueeze(-1)),
    C("squeeze_all", [(2, 1, 3, 1)], lambda lib, x: x.squeeze()),
    C("squeeze_dim", [(2, 1, 3, 1)], lambda lib, x: x.squeeze(1)),
    C("flatten", [(2, 3, 4)], lambda lib, x: x.flatten()),
    C("flatten_from_1", [(2, 3, 4)], lambda lib, x: x.flatten(1)),
    C("expand", [(3, 1)], lambda lib, x: x.expand(2, 3, 4)),
    C("expand_minus_one", [(3, 1)], lambda lib, x: x.expand(-1, 4)),
    C("meshgrid", [(3,), (2,)], lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")),
    # ---- indexing with [] (basic and advanced) and masked_select
    C("index_slice", [(5, 4)], lambda lib, x: x[1:4]),
    C("index_last", [(2, 3, 4)], lambda lib, x: x[:, -1, :]),
    C("index_int", [(2, 3, 4)], lambda lib, x: x[1]),
    C("index_neg_int", [(2, 3, 4)], lambda lib, x: x[-1, 0]),
    C("index_step", [(2, 3, 5)], lambda lib, x: x[..., ::2]),
    C("index_none", [(3, 4)], lambda lib, x: x[None, 1:]),
    C("index_int_list_repeats", [(4, 3)], lambda lib, x: x[[0, 2, 0, 0]]),
    C("index_int_tensor", [(4, 3)], lambda lib, x: x[:, const(lib, x, np.array([2, -1, 0, 2]))]),
    C("index_int_2d", [(5, 3)], lambda lib, x: x[const(lib, x, np.array([[0, 4], [4, 4]]))]),
    C("index_bool_mask", [(3, 4)], lambda lib, x: x[const(lib, x, MASK_34)]),
    C("masked_select", [(3, 4)], lambda lib, x: x.masked_select(const(lib, x, MASK_4))),
    # ---- joining and splitting
    C("cat_0", [(2, 3), (1, 3), (3, 3)], lambda lib, x, y, z: lib.cat([x, y, z])),
    C("cat_1", [(2, 3, 1), (2, 3, 2)], lambda lib, x, y: lib.cat([x, y], dim=-1)),
    C("stack_0", [(3, 4), (3, 4)], lambda lib, x, y: lib.stack([x, y])),
    C("stack_last", [(3, 4), (3, 4), (3, 4)], lambda lib, x, y, z: lib.stack([x, y, z], dim=-1)),
    C("split_size", [(3, 5)], lambda lib, x: x.split(2, dim=1)),
    C("split_sections", [(4, 3)], lambda lib, x: x.split([1, 3])),
    C("chunk", [(5, 3)], lambda lib, x: x.chunk(3)),
    # ---- PyTorch's other spellings of views, slices and joins
    C("movedim_swapaxes_t", [(2, 3, 4)],
      lambda lib, x: lib.movedim(x, (0, 2), (2, 0)) + x.moveaxis(-1, 0).swapaxes(1, 2) + x.swapdims(0, 2)
      + x[0].t().unsqueeze(0).mT.mH.permute(1, 2, 0)),
    C("narrow_select_unbind", [(3, 4)],
      lambda lib, x: lib.narrow(x, 1, -3, 2).sum(1) + x.select(1, -1) + lib.unbind(x, 1)[2]),
    C("tensor_split_sections", [(7, 2)], lambda lib, x: lib.tensor_split(x, 3)),
    C("tensor_split_indices_hsplit", [(2, 6)], lambda lib, x: x.tensor_split([1, 4], dim=1) + lib.hsplit(x, 3)),
    C("vsplit_dsplit_split_with_sizes", [(4, 2, 4)],
      lambda lib, x: lib.vsplit(x, [1]) + x.dsplit(2) + lib.split_with_sizes(x, [1, 3], 2)),
    C("stacks", [(3,), (3,), (2, 3)],
      lambda lib, a, b, m: (lib.hstack([a, b]), lib.vstack([a, m]), lib.dstack((m, m)), lib.column_stack([a, m.T]))),
    C("atleast_ravel_unflatten", [(2, 6)], lambda lib, x: (
        lib.atleast_3d(x), lib.atleast_2d(x[0]), lib.atleast_1d(x[0, 0]), x.ravel(), x.unflatten(1, (3, -1)))),
    C("as_and_broadcast", [(3, 1), (1, 4)],
      lambda lib, x, y: (x.expand_as(y * x) + lib.broadcast_to(y, (3, 4)) + x.T.reshape_as(x) + y.view_as(y)
                         + sum(lib.broadcast_tensors(x, y)))),
    C("block_diag", [(2, 3), (3,), ()], lambda lib, a, b, c: lib.block_diag(a, b, c)),
    C("cartesian_prod", [(3,), (2,)], lambda lib, a, b: lib.cartesian_prod(a, b)),
    C("diff", [(3, 5)], lambda lib, x: lib.diff(x)),
    C("diff_n2_dim0_prepend_append", [(4, 3), (1, 3), (2, 3)],
      lambda lib, x, p, a: x.diff(2, 0, prepend=p, append=a)),
    C("fill_tensor", [(3, 4), ()], lambda lib, x, v: lib.fill(x, v) * x),
    # ================================================================ ops/softmax.py
    C("softmax", [(3, 5)], lambda lib, x: x.softmax(-1)),
    C("softmax_dim0", [(3, 5)], lambda lib, x: x.softmax(0)),
    C("softmax_F_3d", [(2, 3, 4)], lambda lib, x: F(lib).softmax(x, dim=1)),
    C("log_softmax", [(3, 5)], lambda lib, x: x.log_softmax(-1)),
    C("log_softmax_F_3d", [(2, 3, 4)], lambda lib, x: F(lib).log_softmax(x, dim=0)),
    C("softmax_neg_inf", [(3, 4)], lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NEG_INF).softmax(-1)),
    # -inf outputs are zeroed afterwards: differences of -inf are nan, the rest is checked
    C("log_softmax_neg_inf", [(3, 4)],
      lambda lib, x: x.masked_fill(const(lib, x, MASK_34), NEG_INF).log_softmax(-1).masked_fill(
          const(lib, x, MASK_34), 0.0)),
    C("softmax_huge", [(3, 4)], lambda lib, x: (x * 10 + 1e4).softmax(-1)),
    C("log_softmax_huge", [(3, 4)], lambda lib, x: (x * 10 - 1e4).log_softmax(-1)),
    # ================================================================ ops/special.py
    # Each function inside its domain: erfinv on |0.45 x| < 1, ndtri on (0.2, 0.8), lgamma, digamma
    # and entr on x > 0 (away from the poles at 0, -1, ...).
    C("erf_erfc", [(3, 4)], lambda lib, x: x.erf() + lib.erfc(x) + lib.special.erf(x * 2)),
    C("erfinv", [(3, 4)], lambda lib, x: lib.erfinv(x * 0.45)),
    C("erfcx", [(3, 4)], lambda lib, x: lib.special.erfcx(x)),  # <= erfcx(-2) ~ 108: no cancellation in the differences
    C("ndtr_log_ndtr", [(3, 4)], lambda lib, x: lib.special.ndtr(x) + lib.special.log_ndtr(x * 3)),
    C("ndtri", [(3, 4)], lambda lib, x: lib.special.ndtri(x * 0.4), domain="positive"),
    C("lgamma_digamma", [(3, 4)], lambda lib, x: x.lgamma() + lib.digamma(x), domain="positive"),
    C("polygamma", [(3, 4)], lambda lib, x: lib.polygamma(1, x) + x.polygamma(2) + lib.special.polygamma(0, x),
      domain="positive"),
    C("lgamma_negative", [(3, 4)], lambda lib, x: lib.lgamma(x * 0.45 - 1.5)),  # in (-2.4, -0.6): no pole
    C("i0_i0e", [(3, 4)], lambda lib, x: x.i0() + lib.special.i0e(x * 2)),
    C("i1_i1e", [(3, 4)], lambda lib, x: lib.special.i1(x) + lib.special.i1e(x * 2)),
    C("entr", [(3, 4)], lambda lib, x: lib.special.entr(x), domain="positive"),
    C("xlogy", [(3, 4), (4,)], lambda lib, x, y: lib.xlogy(x, y) + x.xlogy(2.5), domain="positive"),
    C("xlogy_number_self", [(3, 4)], lambda lib, y: lib.xlogy(1.5, y), domain="positive"),
    C("xlog1py", [(3, 4), (3, 4)], lambda lib, x, y: lib.special.xlog1py(x, y - 1.2) + lib.special.xlog1py(2.0, y),
      domain="positive"),  # 1 + y > 0
    # ================================================================ ops/transfer.py
    # (no case: test_gradcheck_ops.py::test_gradcheck_to_strict_device checks the cross-device copy)
]
# fmt: on

assert len({c.name for c in OPS}) == len(OPS), "op names must be unique"
