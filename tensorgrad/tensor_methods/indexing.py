"""Tensor methods, indexing: t[index] (ops/shape.py's Index), integer positions along a dim
(gather, scatter, index_select, and their spellings index_add, index_copy, index_fill, take,
take_along_dim, index_put: ops/indexing.py), and masks (masked_fill, tril, triu:
ops/masking.py).  t[index] = value is an in-place write (inplace.py)."""

from __future__ import annotations

import functools

from .. import backend
from ..autograd import is_grad_enabled
from ..backend import ShapeError
from ..ops.indexing import Gather, IndexPutAccumulate, IndexSelect, Scatter, ScatterAdd, ScatterReduce
from ..ops.masking import MaskedFill, Where
from ..ops.shape import Index
from .common import TensorBase, broadcast_shapes, normalize_dim, torch_dtype_name


class IndexingMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ t[index]
    def _index_arrays(self, index, copy=False):
        """Tensors and lists in an index become arrays on self's device; reports advanced indexing.
        copy: copy index tensors' arrays (an op that saves the index must not see later writes)."""
        items = index if isinstance(index, tuple) else (index,)
        out, advanced = [], False
        for it in items:
            if it is None or isinstance(it, (int, slice)) or it is Ellipsis:
                out.append(it)  # basic indexing: the common case, no conversion
                continue
            if isinstance(it, TensorBase):
                if it.device != self.device:
                    raise backend.DeviceError(f"index: tensor on {self.device} indexed by a tensor on {it.device}")
                if it.dtype.kind in "iu" and it.ndim > 0:
                    advanced = True
                if it.ndim > 0 or it.dtype == backend.bool_:
                    it = it._data.copy() if copy else it._data
                else:
                    it = int(it.item())
            elif isinstance(it, (list, tuple)) or backend.is_array(it):
                # a tuple inside the index is a sequence of positions, as a list is (PyTorch): x[1, (2, 0)]
                arr = self._constant(list(it) if isinstance(it, tuple) else it)
                advanced = advanced or arr.dtype.kind in "iu"
                it = arr._data
            out.append(it)
        return (tuple(out) if isinstance(index, tuple) else out[0]), advanced

    def __getitem__(self, index):
        index, advanced = self._index_arrays(index, copy=self.requires_grad and is_grad_enabled())
        try:
            if advanced and isinstance(index, tuple) and any(type(it) is int for it in index):
                # PyTorch applies integers first, as selects, then the rest: x[1, :, t] on (2, 5, 6)
                # is x[1][:, t], shape (5, len(t)).  NumPy counts integers as index arrays, and index
                # arrays split by a slice move to the front: (len(t), 5).  So, in two steps:
                first, rest = [], []
                for it in index:
                    if type(it) is int:
                        first.append(it)
                    elif it is None or isinstance(it, slice):
                        rest.append(it)
                        first.extend([] if it is None else [slice(None)])
                    elif it is Ellipsis:
                        first.append(it)
                        rest.append(it)
                    else:  # an index array walks over 1 axis; a bool mask over as many as it has
                        first.extend([slice(None)] * (it.ndim if it.dtype == backend.bool_ else 1))
                        rest.append(it)
                selected = Index.apply(self, index=tuple(first), advanced=False)
                return Index.apply(selected, index=tuple(rest), advanced=True)
            out = Index.apply(self, index=index, advanced=advanced)
            view_of = getattr(out, "_view_of", None)  # a view outside the graph, as apply noted it
            if view_of is not None and not advanced:  # its basic index too: a recorded write into it uses it
                out._view_of = (view_of[0], index, *view_of[2:])
            return out
        except IndexError as e:
            raise IndexError(f"index {index!r} is out of range for a tensor of shape {self.shape}: {e}") from None

    # -------------------------------------------------------- integer positions along a dim (ops/indexing.py)
    def _index_tensor(self, index, op, dim=None, n=None):
        """An integer index tensor on self's device, its values checked in [0, n) (on a GPU the
        check is queued and reported at the next read, as for embedding ids)."""
        if not isinstance(index, TensorBase):
            index = self._constant(index)
        if index.device != self.device:
            raise backend.DeviceError(f"{op}: input on {self.device}, index on {index.device}")
        if index.dtype.kind not in "iu":
            raise TypeError(f"{op}: index must be an integer tensor (e.g. torch.long), got dtype {index.dtype}")
        if n is not None and index.numel():
            bad = (index._data < 0) | (index._data >= n)

            def fail():
                value = int(backend.to_numpy(index._data[bad].reshape(-1)[:1])[0])
                raise IndexError(f"{op}: index {value} is out of bounds for dim {dim} with size {n}")

            if self.device == "cpu":
                if bad.any():
                    fail()
            else:
                backend.defer_check(bad.any(), fail)
        return index

    def _along_checks(self, op, dim, index, src=None):
        """gather / scatter: index has self's number of dims and fits inside self (and src)."""
        d = normalize_dim(dim, self.ndim, op)
        index = self._index_tensor(index, op, d, self.shape[d] if self.ndim else 1)
        if index.ndim != self.ndim:
            raise ShapeError(f"{op}: index has {index.ndim} dims but the input has {self.ndim} ({self.shape})")
        for a, n in enumerate(index.shape):
            if a != d and n > self.shape[a]:
                raise ShapeError(f"{op}: index shape {index.shape} is larger than the input {self.shape} in dim {a}")
            if isinstance(src, TensorBase) and (src.ndim != index.ndim or n > src.shape[a]):
                raise ShapeError(f"{op}: index shape {index.shape} does not fit inside src {src.shape}")
        return d, index

    def _src(self, src, op):
        if not isinstance(src, TensorBase):
            raise TypeError(f"{op}: src must be a tensor, got {type(src).__name__}")
        if src.device != self.device:
            raise backend.DeviceError(f"{op}: input on {self.device}, src on {src.device}")
        if src.dtype != self.dtype:  # PyTorch refuses rather than casts
            raise RuntimeError(f"{op}: expected self.dtype to be equal to src.dtype, got {self.dtype} and {src.dtype}")
        return src

    def gather(self, dim, index):
        """out[i][j][k] = self[i][index[i][j][k]][k] (dim=1); the gradient is scattered back, repeats adding."""
        if isinstance(index, TensorBase) and index.numel() == 0:  # PyTorch checks no shapes then: empty out
            normalize_dim(dim, self.ndim, "gather")
            return self.reshape(-1)[:0].reshape(index.shape)
        if self.ndim == 0 and isinstance(index, TensorBase) and index.ndim == 1:  # a 0-d input counts as 1-d
            normalize_dim(dim, 0, "gather")
            return self.reshape(1).gather(0, index)
        d, index = self._along_checks("gather", dim, index)
        return Gather.apply(self, index._data, dim=d)

    def scatter(self, dim, index, src=None, value=None, reduce=None):
        """A copy of self with out[i][index[i][j][k]][k] = src[i][j][k] (dim=1); src may be a number."""
        if src is None:
            src = value
        if reduce is not None:
            if reduce not in ("add", "multiply"):
                raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
            if not isinstance(src, TensorBase):
                src = self._constant(self._data.dtype.type(src)).expand(*index.shape)
            return self.scatter_reduce(dim, index, src, "sum" if reduce == "add" else "prod")
        if not isinstance(src, TensorBase):
            d, index = self._along_checks("scatter", dim, index)
            return Scatter.apply(self, index._data, src, dim=d)
        src = self._src(src, "scatter")
        d, index = self._along_checks("scatter", dim, index, src)
        return Scatter.apply(self, index._data, src, dim=d)

    def scatter_add(self, dim, index, src):
        """A copy of self with out[i][index[i][j][k]][k] += src[i][j][k] (dim=1), repeats adding."""
        src = self._src(src, "scatter_add")
        d, index = self._along_checks("scatter_add", dim, index, src)
        return ScatterAdd.apply(self, index._data, src, dim=d)

    def scatter_reduce(self, dim, index, src, reduce, include_self=True):
        """Reduce src into self at the scattered positions: "sum", "prod", "mean", "amax" or "amin"."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise ValueError(f"scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got {reduce!r}")
        src = self._src(src, "scatter_reduce")
        d, index = self._along_checks("scatter_reduce", dim, index, src)
        return ScatterReduce.apply(self, index._data, src, dim=d, reduce=reduce, include_self=include_self)

    def index_select(self, dim, index):
        """The slices self[..., index[k], ...] along dim, for a 1-d integer index."""
        d = normalize_dim(dim, self.ndim, "index_select")
        index = self._index_tensor(index, "index_select", d, self.shape[d] if self.ndim else 1)
        if index.ndim > 1:
            raise ShapeError(f"index_select: index must be 1-d, got shape {index.shape}")
        if self.ndim == 0:  # a 0-d input (taken as 1-d) gives a 0-d result, as in PyTorch
            return IndexSelect.apply(self.reshape(1), index._data.reshape(-1), dim=0).reshape(())
        return IndexSelect.apply(self, index._data.reshape(-1), dim=d)

    def repeat_interleave(self, repeats, dim=None, output_size=None):
        """Each element (dim=None: of the flattened tensor) or slice along dim repeated `repeats` times,
        as an index_select whose index repeats each position (so repeats of one slice add up in backward)."""
        x, d = (self.reshape(-1), 0) if dim is None else (self, normalize_dim(dim, self.ndim, "repeat_interleave"))
        n = x.shape[d]
        xp = backend.namespace(self.device)
        # the counts are read to the host (CuPy's repeat takes a list): the output's size depends on them
        counts = repeats.tolist() if isinstance(repeats, TensorBase) else int(repeats)
        if isinstance(counts, list) and len(counts) == 1:
            counts = counts[0]
        if isinstance(counts, list) and len(counts) != n:
            raise ShapeError(f"repeat_interleave: repeats has {len(counts)} counts, expected {n} or one")
        if min(counts if isinstance(counts, list) else [counts], default=0) < 0:
            raise ValueError("repeat_interleave: repeats must be non-negative")
        index = xp.repeat(xp.arange(n), counts)
        return IndexSelect.apply(x, index, dim=d)

    def nonzero(self, as_tuple=False):
        """The indices of the nonzero elements: (count, ndim) int64, or one 1-d tensor per dim."""
        xp = backend.namespace(self.device)
        parts = [p.astype(backend.int64) for p in xp.nonzero(self._data if self.ndim else self._data.reshape(1))]
        if as_tuple:
            return tuple(self._make(p, self.device, False) for p in parts)
        out = xp.stack(parts, axis=1) if self.ndim else xp.zeros((parts[0].shape[0], 0), dtype=backend.int64)
        return self._make(out, self.device, False)

    # ------------------------------------------------------------------ masks (ops/masking.py)
    def masked_fill(self, mask, value):
        """value where mask is True, self elsewhere; mask is a bool tensor, broadcast with self (the
        result has the broadcast shape, as PyTorch's out-of-place masked_fill; masked_fill_ keeps self's)."""
        if not isinstance(mask, TensorBase) or mask.dtype != backend.bool_:
            got = mask.dtype if isinstance(mask, TensorBase) else type(mask).__name__
            raise TypeError(f"masked_fill: mask must be a bool tensor, got {got}")
        shape = broadcast_shapes("masked_fill", self.shape, mask.shape)
        if shape != self.shape:
            return self.expand(*shape).masked_fill(mask, value)
        if isinstance(value, TensorBase):
            if value.ndim != 0:
                raise RuntimeError(
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                    f"{value.ndim} dimension(s)."
                )
            if value.requires_grad:  # the value gets the gradient of every place it filled: a where
                return Where.apply(mask, value.to(self.dtype), self)
            value = value.item()
        return MaskedFill.apply(self, mask, value=value)

    def masked_select(self, mask):
        """The elements where mask (broadcast with self) is True, as a 1-d tensor."""
        if not isinstance(mask, TensorBase) or mask.dtype != backend.bool_:
            raise TypeError("masked_select: mask must be a bool tensor")
        shape = broadcast_shapes("masked_select", self.shape, mask.shape)
        return self.expand(*shape)[mask.expand(*shape)]

    def tril(self, diagonal=0):
        """The lower triangle (col - row <= diagonal) of the last two dims, zeros above (a masked_fill)."""
        return self._triangle(diagonal, lower=True)

    def triu(self, diagonal=0):
        """The upper triangle (col - row >= diagonal) of the last two dims, zeros below (a masked_fill)."""
        return self._triangle(diagonal, lower=False)

    def _triangle(self, diagonal, lower):
        if self.ndim < 2:
            raise ShapeError(f"{'tril' if lower else 'triu'}: needs at least 2 dims, got shape {self.shape}")
        xp = backend.namespace(self.device)
        n, m = self.shape[-2:]
        keep = xp.tri(n, m, k=diagonal, dtype=bool) if lower else ~xp.tri(n, m, k=diagonal - 1, dtype=bool)
        return self.masked_fill(self._make(~keep, self.device, False), 0)

    # ------------------------------------------------------------ whole slices at a 1-d index (scatter spellings)
    def _slices_index(self, op, dim, index, source=None):
        """(dim, the 1-d index as an index array of source's shape for scatter / scatter_add): slice
        k of source along dim goes to slice index[k] of self.  0-d self and source act as 1-d."""
        d = normalize_dim(dim, self.ndim, op)
        index = self._index_tensor(index, op, d, self.shape[d] if self.ndim else 1)
        if index.ndim > 1:
            raise IndexError(f"{op}(): Index is supposed to be a vector")
        if source is None:
            return d, index
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"{op}(): self ({torch_dtype_name(self.dtype)}) and source ({torch_dtype_name(source.dtype)}) must "
                "have the same scalar type"
            )
        src_shape = source.shape if source.ndim else (1,)
        self_shape = self.shape if self.ndim else (1,)
        if (
            len(src_shape) != len(self_shape)
            or src_shape[d] != index.numel()
            or any(a != b for i, (a, b) in enumerate(zip(src_shape, self_shape)) if i != d)
        ):
            raise ShapeError(
                f"{op}(): source of shape {source.shape} does not fit self {self.shape} with an index of "
                f"{index.numel()} elements along dim {d}"
            )
        xp = backend.namespace(self.device)
        column = index._data.reshape((1,) * d + (-1,) + (1,) * (len(src_shape) - d - 1))
        return d, xp.broadcast_to(column, src_shape)

    def index_add(self, dim, index, source, *, alpha=1):
        """out = self; out[..., index[k], ...] += alpha * source[..., k, ...] (repeats adding): a scatter_add."""
        d, idx = self._slices_index("index_add", dim, index, source)
        if not backend.is_floating(self.dtype) and isinstance(alpha, float):
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        src = source if alpha == 1 else source * alpha
        x = self if self.ndim else self.reshape(1)
        out = ScatterAdd.apply(x, idx, src if src.ndim else src.reshape(1), dim=d)
        return out if self.ndim else out.reshape(())

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        """out[..., index[k], ...] = reduce(out[..., index[k], ...], source[..., k, ...]) for "prod",
        "mean", "amax", "amin": a scatter_reduce with the index spread over source's shape."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise RuntimeError(
                f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
            )
        d, idx = self._slices_index("index_reduce", dim, index, source)
        x = self if self.ndim else self.reshape(1)
        src = source if source.ndim else source.reshape(1)
        out = ScatterReduce.apply(x, idx, src, dim=d, reduce=reduce, include_self=include_self)
        return out if self.ndim else out.reshape(())

    def index_copy(self, dim, index, source):
        """out = self; out[..., index[k], ...] = source[..., k, ...]: a scatter."""
        d, idx = self._slices_index("index_copy", dim, index, source)
        x = self if self.ndim else self.reshape(1)
        out = Scatter.apply(x, idx, source if source.ndim else source.reshape(1), dim=d)
        return out if self.ndim else out.reshape(())

    def index_fill(self, dim, index, value):
        """value in the slices index[k] of dim: a masked_fill with the mask of those slices."""
        d, index = self._slices_index("index_fill", dim, index)
        if isinstance(value, TensorBase) and value.ndim != 0:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        xp = backend.namespace(self.device)
        n = self.shape[d] if self.ndim else 1
        hit = xp.zeros(n, dtype=bool)
        hit[index._data.reshape(-1)] = True
        mask = hit.reshape((-1,) + (1,) * (self.ndim - d - 1)) if self.ndim else hit.reshape(())
        return self.masked_fill(self._make(mask, self.device, False), value)

    def index_put(self, indices, values, accumulate=False):
        """out = self; out[indices] = values (indices: a tuple of integer or bool tensors), or
        out[indices] += values with accumulate (repeated positions adding: ops/indexing.py)."""
        if not isinstance(values, TensorBase):
            values = self._constant(values, dtype=self.dtype)
        if values.dtype != self.dtype:
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{torch_dtype_name(self.dtype)} for the destination and {torch_dtype_name(values.dtype)} for the "
                "source."
            )
        index = tuple(indices)
        if len(index) > max(self.ndim, 1):
            raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {len(index)})")
        self._check_put_values(index, values)
        if not accumulate:
            out = self.clone()
            out[index] = values
            return out
        checked, axis = [], 0  # integer indices wrapped and range-checked (CuPy's scatter-add would not check)
        for it in index:
            if isinstance(it, TensorBase) and it.dtype.kind in "iu":
                it = self._from_the_end(it, "index_put", self.shape[axis] if self.ndim else 1)
            checked.append(it)
            axis += it.ndim if isinstance(it, TensorBase) and it.dtype == backend.bool_ else 1
        arrays, _ = self._index_arrays(tuple(checked), copy=True)
        try:
            return IndexPutAccumulate.apply(self, values, index=arrays)
        except IndexError as e:
            raise IndexError(f"index_put: {e}") from None

    # in place: the out-of-place result written back with copy_ (a SetItem at every element, recorded
    # in the graph: the gradient reaches the old self and source through the out-of-place op)
    def index_add_(self, dim, index, source, *, alpha=1):
        return self.copy_(self.index_add(dim, index, source, alpha=alpha))

    def index_copy_(self, dim, index, source):
        return self.copy_(self.index_copy(dim, index, source))

    def index_fill_(self, dim, index, value):
        return self.copy_(self.index_fill(dim, index, value))

    def _check_put_values(self, index, values):
        """PyTorch's rule for index_put's values: they broadcast to the indexed result `self[index]`
        as they are.  (`y[index] = v` first drops v's leading dims of size 1: there a (1, 1, 3) value
        fits a (2, 3) result, here it does not.)  The result's dims, from the indices' shapes: their
        broadcast (a bool mask counts as one dim, its True count) and the dims after those they index."""
        if not index or not all(isinstance(it, TensorBase) and it.ndim for it in index):
            return  # (a 0-d or non-tensor index: the write's own checks)
        masks = [it.dtype == backend.bool_ for it in index]
        consumed = sum(it.ndim if mask else 1 for it, mask in zip(index, masks))
        indexed = max(1 if mask else it.ndim for it, mask in zip(index, masks))
        if consumed > self.ndim or values.ndim <= indexed + self.ndim - consumed:
            return  # as many dims as the result or fewer: the write checks their sizes
        # the result's shape, for the error's words (a mask's True count read back: an error path)
        counted = [(int(it.sum().item()),) if mask else it.shape for it, mask in zip(index, masks)]
        shape = [*functools.reduce(functools.partial(broadcast_shapes, "index_put"), counted), *self.shape[consumed:]]
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing result of "
            f"shape {shape}"
        )

    def index_put_(self, indices, values, accumulate=False):
        return self.copy_(self.index_put(indices, values, accumulate))

    def _from_the_end(self, index, op, n):
        """A negative index counts from the end (index + n, as PyTorch), computed on the device; the
        result is checked in [0, n) as every index is (on a GPU at the next read: no sync here)."""
        index = self._index_tensor(index, op)
        wrapped = self._make(index._data + n * (index._data < 0), self.device, False)
        return self._index_tensor(wrapped, op, 0, n)

    def take(self, index):
        """self.reshape(-1)[index]: elements of the flattened tensor, in index's shape (an index_select)."""
        flat = self.reshape(-1)
        index = self._from_the_end(index, "take", flat.shape[0])
        return IndexSelect.apply(flat, index._data.reshape(-1), dim=0).reshape(index.shape)

    def take_along_dim(self, indices, dim=None):
        """dim None: take on the flattened self (a 1-d result); else a gather along dim after self and
        indices broadcast against each other in every other dim."""
        if not isinstance(indices, TensorBase) or indices.dtype != backend.int64:
            got = indices.dtype if isinstance(indices, TensorBase) else type(indices).__name__
            got = torch_dtype_name(got) if isinstance(indices, TensorBase) else got
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {got}")
        if dim is None:
            return self.take(indices.reshape(-1))
        if self.ndim != indices.ndim:
            raise RuntimeError(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
                f"{self.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
            )
        d = normalize_dim(dim, self.ndim, "take_along_dim")
        x_shape, i_shape = list(self.shape), list(indices.shape)
        x_shape[d] = i_shape[d] = 1
        shape = list(broadcast_shapes("take_along_dim", tuple(x_shape), tuple(i_shape)))
        x_target, i_target = list(shape), list(shape)
        x_target[d], i_target[d] = (self.shape[d] if self.ndim else 1), (indices.shape[d] if indices.ndim else 1)
        x = self.expand(*x_target) if self.ndim else self
        idx = indices.expand(*i_target) if indices.ndim else indices
        return x.gather(d, self._from_the_end(idx, "take_along_dim", x.shape[d] if x.ndim else 1))
