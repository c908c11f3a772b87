"""Hypothesis property tests of convolution and pooling over random shapes, strides, paddings,
dilations and groups.

The references are the definitions, written as loops over output pixels (conv2d, pooling) or
input pixels (conv_transpose2d), independent of the im2col / col2im code under test.
Convolution is linear in x and in w separately, and average pooling in x, so their backwards
are checked by the adjoint identity <L^T(g), v> = <g, L(v)> against the reference L (see
test_properties_indexing.py); max pooling, which is not linear, by central differences.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from test_properties_indexing import TOL, check_linear

import tensorgrad as tg
import tensorgrad.nn.functional as F
from tensorgrad.testing import strategies as S


def ref_conv2d(x, w, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    og = o // groups
    y = np.zeros((n, o, oh, ow))
    for a in range(oh):
        for b in range(ow):
            rows = a * stride[0] + dilation[0] * np.arange(kh)
            cols = b * stride[1] + dilation[1] * np.arange(kw)
            for oc in range(o):
                g = oc // og
                patch = xp[:, g * cg : (g + 1) * cg][:, :, rows][:, :, :, cols]  # (N, Cg, KH, KW)
                y[:, oc, a, b] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return y


def ref_conv_transpose2d(x, w, stride, padding, output_padding, dilation, groups):
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    full = [(s - 1) * st_ + d * (k - 1) + 1 + op for s, st_, d, k, op in
            zip((h, wd), stride, dilation, (kh, kw), output_padding)]  # fmt: skip
    y = np.zeros((n, og * groups, *full))
    for ic in range(c):
        g = ic // cg
        for a in range(h):
            for b in range(wd):
                for i in range(kh):
                    for j in range(kw):
                        r, q = a * stride[0] + i * dilation[0], b * stride[1] + j * dilation[1]
                        y[:, g * og : (g + 1) * og, r, q] += x[:, ic, a, b][:, None] * w[ic, :, i, j]
    p = padding
    return y[:, :, p[0] : full[0] - p[0], p[1] : full[1] - p[1]]


@st.composite
def conv_case(draw):
    groups = draw(st.sampled_from([1, 2]))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    side = [draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 6)) for k, d, p in zip(kernel, dilation, padding)]
    n = draw(st.integers(1, 2))
    x = draw(S.float_arrays((n, cg * groups, *side)))
    w = draw(S.float_arrays((og * groups, cg, *kernel)))
    return x, w, stride, padding, dilation, groups


@given(case=conv_case(), device=S.devices(cuda=False))
def test_conv2d_property(case, device):
    x, w, stride, padding, dilation, groups = case
    args = (stride, padding, dilation, groups)
    tw, tx = tg.tensor(w, device=device), tg.tensor(x, device=device)
    check_linear(lambda t: F.conv2d(t, tw, None, *args), lambda a: ref_conv2d(a, w, *args), x, device)
    check_linear(lambda t: F.conv2d(tx, t, None, *args), lambda a: ref_conv2d(x, a, *args), w, device)


@given(case=conv_case(), data=st.data(), device=S.devices(cuda=False))
def test_conv_transpose2d_property(case, data, device):
    x, w, stride, _, dilation, groups = case
    w = data.draw(S.float_arrays((x.shape[1], data.draw(st.integers(1, 2)), *w.shape[2:])))  # (C, Og, KH, KW)
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    padding = tuple(data.draw(st.integers(0, (n - 1) * s // 2)) for n, s in zip(x.shape[2:], stride))
    args = (stride, padding, output_padding, groups, dilation)
    ref_args = (stride, padding, output_padding, dilation, groups)
    tw, tx = tg.tensor(w, device=device), tg.tensor(x, device=device)
    check_linear(lambda t: F.conv_transpose2d(t, tw, None, *args), lambda a: ref_conv_transpose2d(a, w, *ref_args),
                 x, device)  # fmt: skip
    check_linear(lambda t: F.conv_transpose2d(tx, t, None, *args), lambda a: ref_conv_transpose2d(x, a, *ref_args),
                 w, device)  # fmt: skip


def ref_pool(x, kernel, stride, padding, dilation, ceil_mode, reduce, count_include_pad=True):
    """Loops over output pixels; padding reads -inf (max) or 0 (avg); the windows' extents as PyTorch."""
    n, c, h, wd = x.shape
    outs = []
    for size, k, s, p, d in zip((h, wd), kernel, stride, padding, dilation):
        span = size + 2 * p - d * (k - 1) - 1
        m = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (m - 1) * s >= size + p:
            m -= 1
        outs.append(m)
    y = np.zeros((n, c, *outs))
    for a in range(outs[0]):
        for b in range(outs[1]):
            rows = [a * stride[0] - padding[0] + i * dilation[0] for i in range(kernel[0])]
            cols = [b * stride[1] - padding[1] + j * dilation[1] for j in range(kernel[1])]
            inside = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < wd]
            vals = np.stack([x[:, :, r, q] for r, q in inside], -1)
            if reduce == "max":
                y[:, :, a, b] = vals.max(-1)
            else:  # avg (dilation 1): divide by the window clipped to the padded input, or by the real pixels
                r0, q0 = rows[0], cols[0]
                r1, q1 = min(r0 + kernel[0], h + padding[0]), min(q0 + kernel[1], wd + padding[1])
                count = (r1 - r0) * (q1 - q0) if count_include_pad else len(inside)
                y[:, :, a, b] = vals.sum(-1) / count
    return y


@st.composite
def pool_case(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    side = [draw(st.integers(k, 6)) for k in kernel]
    x = draw(S.distinct_float_arrays((draw(st.integers(1, 2)), draw(st.integers(1, 2)), *side)))
    return x, kernel, stride, padding, draw(st.booleans())


@given(case=pool_case(), dilation=st.integers(1, 2), device=S.devices(cuda=False))
def test_max_pool2d_property(case, dilation, device):
    x, kernel, stride, padding, ceil_mode = case
    # a tie is a kink: central differences (step 1e-6) straddle two values closer than their step
    assume(x.size == 1 or np.diff(np.sort(x, axis=None)).min() > 1e-4)
    if any(n + 2 * p < dilation * (k - 1) + 1 for n, k, p in zip(x.shape[2:], kernel, padding)):
        return  # the dilated kernel does not fit (an error, tested elsewhere)
    t = tg.tensor(x, device=device, requires_grad=True)
    y = F.max_pool2d(t, kernel, stride, padding, dilation, ceil_mode)
    want = ref_pool(x, kernel, stride, padding, (dilation,) * 2, ceil_mode, "max")
    np.testing.assert_allclose(y.numpy(), want, **TOL)
    assert tg.gradcheck(lambda v: F.max_pool2d(v, kernel, stride, padding, dilation, ceil_mode), [t])


@given(case=pool_case(), count_include_pad=st.booleans(), device=S.devices(cuda=False))
def test_avg_pool2d_property(case, count_include_pad, device):
    x, kernel, stride, padding, ceil_mode = case
    check_linear(lambda t: F.avg_pool2d(t, kernel, stride, padding, ceil_mode, count_include_pad),
                 lambda a: ref_pool(a, kernel, stride, padding, (1, 1), ceil_mode, "avg", count_include_pad),
                 x, device)  # fmt: skip
