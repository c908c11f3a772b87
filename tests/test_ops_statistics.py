"""The statistics ops (tensor_methods/statistics.py, functions/statistics.py) at their edges, against PyTorch:
NaN, 0-d and zero-size inputs, integer dtypes, the named tuples they return, and what they refuse
(the same exception type as PyTorch).  Random shapes are tests/test_properties_statistics.py's."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

NAN = float("nan")

# Each case: fn(lib, t), where t(data, dtype=None) makes a tensor of the library (float64 by default
# for float data).  The outputs are compared exactly (these ops select, count or search: no
# arithmetic), except where a case is marked as computed.
CASES = {
    # ---- order statistics
    "median_nan_propagates": lambda lib, t: lib.median(t([1.0, NAN, 3.0, 2.0])),
    "median_lower_middle": lambda lib, t: lib.median(t([4.0, 1.0, 3.0, 2.0])),
    "median_dim_nan_index": lambda lib, t: lib.median(t([[1.0, NAN, 0.0, NAN], [2.0, 0.0, 1.0, 5.0]]), 1),
    "median_empty": lambda lib, t: lib.median(t(np.zeros((0, 3)))),
    "median_empty_other_dim": lambda lib, t: lib.median(t(np.zeros((0, 3))), 1),
    "median_empty_dim_refused": lambda lib, t: lib.median(t(np.zeros((0, 3))), 0),
    "median_0d": lambda lib, t: lib.median(t(2.5), 0, keepdim=True),
    "median_int": lambda lib, t: lib.median(t([3, 1, 2, 7]), 0),
    "median_keepdim_without_dim": lambda lib, t: lib.median(t([3.0, 1.0]), keepdim=True),
    "median_dim_out_of_range": lambda lib, t: lib.median(t([1.0, 2.0]), 1),
    "nanmedian_skips_nan": lambda lib, t: lib.nanmedian(t([[NAN, 1.0, NAN, 2.0, 5.0], [3.0, NAN, 1.0, 0.0, NAN]]), 1),
    "nanmedian_all_nan": lambda lib, t: lib.nanmedian(t([NAN, NAN])),
    "mode_smallest_most_frequent_last_index": lambda lib, t: lib.mode(t([3.0, 1.0, 2.0, 2.0, 3.0, 1.0])),
    "mode_rows": lambda lib, t: lib.mode(t([[1, 2, 2, 0], [5, 5, 4, 4]]), 1, keepdim=True),
    "mode_0d": lambda lib, t: lib.mode(t(3.0)),
    "kthvalue_nan_is_largest": lambda lib, t: lib.kthvalue(t([1.0, NAN, 0.0]), 3),
    "kthvalue_k_too_large": lambda lib, t: lib.kthvalue(t([1.0, 2.0]), 3),
    "kthvalue_k_zero": lambda lib, t: lib.kthvalue(t([1.0, 2.0]), 0),
    "msort": lambda lib, t: lib.msort(t([[3.0, 1.0], [2.0, 4.0], [0.0, 5.0]])),
    "aminmax_dim": lambda lib, t: lib.aminmax(t([[1.0, NAN], [3.0, -1.0]]), dim=0),
    "aminmax_empty_refused": lambda lib, t: lib.aminmax(t(np.zeros((2, 0)))),
    "aminmax_empty_dim_refused": lambda lib, t: lib.aminmax(t(np.zeros((2, 0))), dim=1),
    "aminmax_int": lambda lib, t: lib.aminmax(t([4, -2, 9])),
    # ---- quantile
    "quantile_q_list": lambda lib, t: lib.quantile(t([[0.0, 4.0, 1.0], [2.0, 3.0, 8.0]]), t([0.0, 0.25, 1.0]), 1),
    "quantile_nan_row": lambda lib, t: lib.quantile(t([[0.0, NAN, 1.0], [2.0, 3.0, 8.0]]), 0.5, 1),
    "nanquantile_nan_row": lambda lib, t: lib.nanquantile(t([[0.0, NAN, 1.0], [NAN, NAN, NAN]]), 0.5, 1),
    "quantile_nearest_half_to_even": lambda lib, t: lib.quantile(t([0.0, 1.0, 2.0, 3.0, 4.0]), t([0.125, 0.375]),
                                                                 interpolation="nearest"),
    "quantile_q_out_of_range": lambda lib, t: lib.quantile(t([1.0, 2.0]), 1.5),
    "quantile_q_tensor_out_of_range": lambda lib, t: lib.quantile(t([1.0, 2.0]), t([0.5, -0.1])),
    "quantile_q_2d": lambda lib, t: lib.quantile(t([1.0, 2.0]), t([[0.5]])),
    "quantile_q_dtype": lambda lib, t: lib.quantile(t([1.0, 2.0]), t([0.5], lib.float32)),
    "quantile_int_input": lambda lib, t: lib.quantile(t([1, 2]), 0.5),
    "quantile_empty": lambda lib, t: lib.quantile(t(np.zeros(0)), 0.5),
    "quantile_bad_interpolation": lambda lib, t: lib.quantile(t([1.0, 2.0]), 0.5, interpolation="cubic"),
    # ---- NaN-skipping reductions
    "nansum_int": lambda lib, t: lib.nansum(t([[1, 2], [3, 4]], lib.int32), 0),
    "nansum_all_nan": lambda lib, t: lib.nansum(t([NAN, NAN])),
    "nanmean_all_nan_row": lambda lib, t: lib.nanmean(t([[NAN, NAN], [1.0, NAN]]), 1),
    "nanmean_int_refused": lambda lib, t: lib.nanmean(t([1, 2])),
    # ---- counting, distinct values
    "count_nonzero_dims": lambda lib, t: lib.count_nonzero(t([[1.0, 0.0, NAN], [0.0, 0.0, 2.0]]), (0, 1)),
    "count_nonzero_dim": lambda lib, t: lib.count_nonzero(t([[1, 0, 3], [0, 0, 2]]), dim=-1),
    "argwhere_0d": lambda lib, t: lib.argwhere(t(1.0)),
    "bincount_minlength": lambda lib, t: lib.bincount(t([1, 1, 4]), minlength=7),
    "bincount_weights": lambda lib, t: lib.bincount(t([1, 1, 4]), t([0.5, 2.0, 1.0])),
    "bincount_float_weights32": lambda lib, t: lib.bincount(t([0, 2]), t([0.5, 2.0], lib.float32)),
    "bincount_empty": lambda lib, t: lib.bincount(t(np.zeros(0, dtype=np.int64))),
    "bincount_negative": lambda lib, t: lib.bincount(t([1, -1])),
    "bincount_float_input": lambda lib, t: lib.bincount(t([1.0, 2.0])),
    "bincount_2d": lambda lib, t: lib.bincount(t([[1, 2]])),
    "unique_inverse_counts": lambda lib, t: lib.unique(t([[3, 1], [1, 7]]), return_inverse=True, return_counts=True),
    "unique_dim": lambda lib, t: lib.unique(t([[1, 2], [0, 5], [1, 2]]), dim=0, return_inverse=True),
    "unique_0d": lambda lib, t: lib.unique(t(4.0), return_counts=True),
    "unique_0d_dim_refused": lambda lib, t: lib.unique(t(4.0), dim=0),
    "unique_consecutive_0d_dim_refused": lambda lib, t: lib.unique_consecutive(t(4.0), dim=0),
    "searchsorted_int_values": lambda lib, t: lib.searchsorted(t([1.0, 2.0]), t([1, 2])),
    "isin_mixed_dtypes": lambda lib, t: lib.isin(t([1, 2]), t([1.0, 2.5])),
    "unique_bool": lambda lib, t: lib.unique(t([True, False, True])),
    "unique_nan_distinct": lambda lib, t: lib.unique(t([NAN, 1.0, NAN]), return_inverse=True, return_counts=True),
    "unique_consecutive_nan": lambda lib, t: lib.unique_consecutive(t([NAN, NAN, 1.0, 1.0]), return_counts=True),
    "unique_consecutive": lambda lib, t: lib.unique_consecutive(t([1, 1, 2, 2, 3, 1, 1]), True, True),
    "unique_consecutive_dim": lambda lib, t: lib.unique_consecutive(t([[1, 1, 2], [1, 1, 3]]), dim=1,
                                                                    return_counts=True),
    "isin_scalar_test": lambda lib, t: lib.isin(t([1, 2, 3]), 2),
    "isin_invert": lambda lib, t: lib.isin(t([[1, 2], [3, 4]]), t([4, 1]), invert=True),
    "equal_shapes_differ": lambda lib, t: lib.equal(t([1.0]), t([1.0, 1.0])),
    "equal_nan": lambda lib, t: lib.equal(t([NAN]), t([NAN])),
    "equal_same": lambda lib, t: lib.equal(t([[1, 2]]), t([[1, 2]])),
    # ---- searching
    "searchsorted_scalar": lambda lib, t: lib.searchsorted(t([1.0, 2.0, 2.0, 5.0]), 2.0),
    "searchsorted_right_int32": lambda lib, t: lib.searchsorted(t([1.0, 2.0, 2.0, 5.0]), t([2.0, 9.0]), right=True,
                                                                 out_int32=True),
    "searchsorted_side_sorter": lambda lib, t: lib.searchsorted(t([5.0, 1.0, 2.0]), t([[2.0], [0.0]]), side="right",
                                                                 sorter=t([1, 2, 0])),
    "searchsorted_rows": lambda lib, t: lib.searchsorted(t([[1.0, 3.0], [0.0, 9.0]]), t([[2.0, 3.0], [9.0, -1.0]])),
    "searchsorted_side_conflict": lambda lib, t: lib.searchsorted(t([1.0]), t([1.0]), right=True, side="left"),
    "searchsorted_rows_mismatch": lambda lib, t: lib.searchsorted(t([[1.0, 3.0], [0.0, 9.0]]), t([[2.0]] * 3)),
    "bucketize": lambda lib, t: lib.bucketize(t([[0.0, 1.0], [2.5, 9.0]]), t([1.0, 2.0, 3.0])),
    "bucketize_right_scalar": lambda lib, t: lib.bucketize(2.0, t([1.0, 2.0, 3.0]), right=True),
    "bucketize_2d_refused": lambda lib, t: lib.bucketize(t([1.0]), t([[1.0, 2.0]])),
    # ---- counting values: histogram (PyTorch's default of 100 bins, tensor edges, range, weight, density), histc
    "histogram_default_bins_density": lambda lib, t: lib.histogram(t([1.0, 2.0, 3.0, 4.0, 5.0]), density=True),
    "histogram_method_default_bins": lambda lib, t: t([1.0, 2.0, 3.0]).histogram(),
    "histogram_method_bins_tensor": lambda lib, t: t([1.0, 2.0, 3.0]).histogram(t([0.0, 2.5, 3.0]), density=True),
    "histogram_bins_tensor_keyword": lambda lib, t: lib.histogram(t([1.0, 2.0, 3.0, 4.0, 5.0]), bins=t([0.0, 2, 6])),
    "histogram_bins_tensor_decreasing": lambda lib, t: lib.histogram(t([1.0, 2.0, 3.0]), t([6.0, 2.0, 0.0])),
    "histogram_bins_tensor_dtype_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), t([0.0, 3.0], lib.float64)),
    "histogram_bins_tensor_2d_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), t([[0.0, 3.0]])),
    "histogram_bins_tensor_one_edge_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), t([3.0])),
    "histogram_bins_tensor_with_range_refused": lambda lib, t: lib.histogram(t([1.0]), t([0.0, 3.0]), range=(0.0, 1.0)),
    "histogram_float_bins_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), 3.0),
    "histogram_range_weight_density": lambda lib, t: lib.histogram(t([1.0, 2.0, 1.0]), 4, range=(0.0, 3.0),
                                                                   weight=t([1.0, 2.0, 4.0]), density=True),
    "histogram_weight_2d": lambda lib, t: lib.histogram(t([[1.0, 2.0], [3.0, 7.0]]), 3,
                                                        weight=t([[1.0, 2.0], [0.5, 1.0]])),
    "histogram_weight_dtype_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), 2, weight=t([1.0, 2.0], lib.float64)),
    "histogram_weight_size_refused": lambda lib, t: lib.histogram(t([1.0, 2.0, 3.0]), 2, weight=t([1.0, 2.0])),
    "histogram_nan_range_refused": lambda lib, t: lib.histogram(t([1.0, NAN, 3.0]), 3),
    "histogram_inf_range_refused": lambda lib, t: lib.histogram(t([1.0, float("inf")]), 3),
    "histogram_nan_inf_outside_given_range": lambda lib, t: lib.histogram(t([1.0, NAN, 3.0, float("inf")]), 3,
                                                                          range=(0.0, 4.0)),
    "histogram_range_of_three_refused": lambda lib, t: lib.histogram(t([1.0, 2.0]), 2, range=(1.0, 2.0, 3.0)),
    "histogram_float16_refused": lambda lib, t: lib.histogram(t([1.0, 2.0], lib.float16), 2),
    "histogram_float32_edges_ties": lambda lib, t: lib.histogram(t([0.0, 0.1, 0.2, 0.3, 0.4, 0.5], lib.float32), 6,
                                                                 range=(-0.1, 0.5)),
    "histc_method": lambda lib, t: t([1.0, 2.0, 3.0]).histc(4, 0, 3),
    "histc_nan_range_refused": lambda lib, t: lib.histc(t([1.0, NAN, 3.0]), 4),
    "histc_nan_in_given_range": lambda lib, t: lib.histc(t([1.0, NAN, 3.0]), 4, 0, 4),
    "histc_zero_bins_refused": lambda lib, t: lib.histc(t([1.0, 2.0]), 0),
    "histc_float_bins_refused": lambda lib, t: lib.histc(t([1.0, 2.0]), 2.0),
    "histc_float16": lambda lib, t: lib.histc(t([1.0, 2.0, 2.5], lib.float16), 3),
    "histc_float32_bins": lambda lib, t: lib.histc(t([0.1, 0.2, 0.3, 0.25], lib.float32), 3, min=0.1, max=0.3),
    # ---- covariance, renorm, integration, logspace (computed: compared to rounding)
    "cov_correction_too_large": lambda lib, t: lib.cov(t([1.0, 2.0]), correction=2),
    "cov_3d_refused": lambda lib, t: lib.cov(t(np.zeros((2, 2, 2)))),
    "cov_int": lambda lib, t: lib.cov(t([[1, 2, 4], [0, 3, 3]])),
    "corrcoef_1d": lambda lib, t: lib.corrcoef(t([1.0, 2.0, 4.0])),
    "renorm_1d_refused": lambda lib, t: lib.renorm(t([1.0, 2.0]), 2, 0, 1.0),
    "renorm_negative_p": lambda lib, t: lib.renorm(t([[1.0, 2.0]]), -1, 0, 1.0),
    "trapezoid_empty": lambda lib, t: lib.trapezoid(t(np.zeros((2, 0)))),
    "trapezoid_x_length": lambda lib, t: lib.trapezoid(t([1.0, 2.0, 3.0]), t([0.0, 1.0])),
    "logspace_default_dtype": lambda lib, t: lib.logspace(-1, 2, 4),
    "logspace_one_step": lambda lib, t: lib.logspace(2, 5, 1, base=2.0),
    "logspace_zero_steps": lambda lib, t: lib.logspace(2, 5, 0),
    "logspace_negative_steps": lambda lib, t: lib.logspace(2, 5, -1),
    "logspace_1d_tensor_refused": lambda lib, t: lib.logspace(t([0.0]), t([1.0]), 3),
}

# The same formulas evaluated in another order (cov's matmul, logspace's pow): rounding only, at
# torch.testing's defaults for each dtype.
COMPUTED_TOL = {
    "float64": {"rtol": 1e-7, "atol": 1e-7},
    "float32": {"rtol": 1.3e-6, "atol": 1e-5},
    "float16": {"rtol": 1e-3, "atol": 1e-5},  # torch.testing's float16 defaults (histc's counts are exact anyway)
}


def maker(lib, device):
    def t(data, dtype=None):
        if lib is torch:
            return torch.tensor(data, dtype=dtype)
        return tg.tensor(data, dtype=dtype, device=device)

    return t


def flat(out):
    if isinstance(out, tuple | list):
        return [y for x in out for y in flat(x)]
    return [out]


@pytest.mark.parametrize("name", list(CASES))
def test_statistics_edge_case_as_torch(name, device):
    fn = CASES[name]
    try:
        want = fn(torch, maker(torch, device))
    except Exception as e:
        with pytest.raises(type(e)):
            tg.tensor(0.0).numpy()  # nothing pending from an earlier case
            for o in flat(fn(tg, maker(tg, device))):
                if isinstance(o, tg.Tensor):
                    o.numpy()  # a device check the op deferred is raised on reading
        return
    got = fn(tg, maker(tg, device))
    if type(want).__module__ == "torch.return_types":  # a named tuple: the same name and fields
        assert type(got).__name__ == type(want).__name__
        for field in got._fields:
            assert getattr(got, field) is got[got._fields.index(field)] and hasattr(want, field)
    got, want = flat(got), flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if not isinstance(w, torch.Tensor):
            assert type(g) is type(w) and g == w
            continue
        assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype).removeprefix("torch.")
        if w.dtype.is_floating_point:
            np.testing.assert_allclose(g.numpy(), w.numpy(), **COMPUTED_TOL[str(g.dtype)])
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy())
