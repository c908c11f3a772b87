"""Tensor methods, shape: reshape and view, permutations, squeeze and expand, splits
(ops/shape.py), and the rearrangements (ops/rearrange.py): repeat, flip, roll and diag_embed
copy, diagonal and unfold are views, as PyTorch's.  Most of PyTorch's other spellings (movedim,
swapaxes, t, mT, narrow, select, unbind, tensor_split, rot90, diff, ...) are written here as
compositions of these, so their gradients are those ops' backwards."""

from __future__ import annotations

import math

from .. import backend
from ..autograd import is_grad_enabled
from ..backend import ShapeError
from ..ops.rearrange import DiagEmbed, Diagonal, Flip, Repeat, Roll, Unfold
from ..ops.shape import Cat, Expand, Permute, Reshape
from .common import TensorBase, broadcast_shapes, normalize_dim, normalize_dims, shape_arg


class ShapeMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ views (ops/shape.py)
    def reshape(self, *shape):
        shape = shape_arg(shape)
        if shape == self.shape:
            return self
        n, known, unknown = self.numel(), 1, [i for i, s in enumerate(shape) if s == -1]
        for s in shape:
            known *= s if s != -1 else 1
        if len(unknown) > 1 or (not unknown and known != n) or (unknown and (known == 0 or n % known)):
            raise ShapeError(f"reshape: shape {shape} is invalid for a tensor of shape {self.shape} ({n} elements)")
        return Reshape.apply(self, shape=shape)

    def view(self, *shape_or_dtype):
        """view(shape): the same elements in another shape, sharing self's storage, as in PyTorch:
        where the elements' strides allow no such view (a transpose flattened, a slice of rows cut
        short merged with the next dim) it raises PyTorch's error rather than copy, since writes
        into a copy would not reach self (`reshape` copies there).  view(dtype) reinterprets the
        bytes as another dtype (no copy, the same storage and version counter, outside the graph)."""
        arg = shape_or_dtype[0] if len(shape_or_dtype) == 1 else None
        if arg is None or isinstance(arg, (int, tuple, list)):
            out = self.reshape(*shape_or_dtype)
            if out is not self and out.numel() and backend.storage_of(out._data) is not backend.storage_of(self._data):
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                    "across two contiguous subspaces). Use .reshape(...) instead."
                )  # (PyTorch's words; the copy reshape made is dropped)
            return out
        dtype = backend.as_dtype(arg)
        if dtype == self.dtype:
            return self
        if self.requires_grad and is_grad_enabled():
            raise RuntimeError(
                f"view(dtype): reinterpreting {self.dtype} as {dtype} is not differentiable; detach() first"
            )
        if dtype.itemsize != self.dtype.itemsize and (
            self.ndim == 0 or (self.shape[-1] * self.dtype.itemsize) % dtype.itemsize
        ):
            raise RuntimeError(
                f"view(dtype): cannot view a {self.dtype} tensor of shape {self.shape} as {dtype}: with a different "
                "element size the last dim must be contiguous and its size in bytes divisible by the new element size"
            )
        try:
            data = self._data.view(dtype)
        except ValueError as e:
            raise RuntimeError(
                f"view(dtype): cannot view a {self.dtype} tensor of shape {self.shape} as {dtype}: {e}"
            ) from None
        t = self._make(data, self.device, False)
        t._counter = self._counter
        return t

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim, "flatten"), normalize_dim(end_dim, self.ndim, "flatten")
        if s > e:
            raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        # the merged size written out, not -1: with a zero-size dim elsewhere, -1 would be ambiguous
        return self.reshape(self.shape[:s] + (math.prod(self.shape[s : e + 1]),) + self.shape[e + 1 :])

    def permute(self, *dims):
        dims = tuple(normalize_dim(d, self.ndim, "permute") for d in shape_arg(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise ShapeError(f"permute: {dims} is not a permutation of the {self.ndim} dims of {self.shape}")
        return Permute.apply(self, axes=dims)

    def transpose(self, dim0, dim1):
        axes = list(range(self.ndim))
        d0, d1 = normalize_dim(dim0, self.ndim, "transpose"), normalize_dim(dim1, self.ndim, "transpose")
        if axes:  # a 0-d tensor has no axes to swap (dims 0 and -1 name it, as in PyTorch)
            axes[d0], axes[d1] = axes[d1], axes[d0]
        return Permute.apply(self, axes=tuple(axes))

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    def unsqueeze(self, dim):
        d = normalize_dim(dim, self.ndim + 1, "unsqueeze")
        return Reshape.apply(self, shape=self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim=None):
        if dim is None:
            shape = tuple(s for s in self.shape if s != 1)
        else:
            dims = normalize_dims(dim, self.ndim, "squeeze")
            shape = tuple(s for i, s in enumerate(self.shape) if not (i in dims and s == 1))
        return self if shape == self.shape else Reshape.apply(self, shape=shape)

    def expand(self, *sizes):
        sizes = shape_arg(sizes)
        lead = len(sizes) - self.ndim
        shape = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        if broadcast_shapes("expand", self.shape, shape) != shape:
            raise ShapeError(f"expand: cannot expand shape {self.shape} to {sizes}")
        return Expand.apply(self, shape=shape)

    def split(self, split_size_or_sections, dim=0):
        """Pieces of `split_size` along dim (the last may be smaller), or of the given sizes."""
        d = normalize_dim(dim, self.ndim, "split")
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            sizes = [min(step, n - s) for s in range(0, n, step)]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise ShapeError(f"split: sizes {sizes} do not add up to {n}, the size of dim {dim}")
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * d + (slice(start, start + size),)
            pieces.append(self[index])
            start += size
        return tuple(pieces)

    def chunk(self, chunks, dim=0):
        n = self.shape[normalize_dim(dim, self.ndim, "chunk")]
        return self.split(-(-n // chunks), dim)

    # ------------------------------------------------------------------ rearrangements (ops/rearrange.py)
    def repeat(self, *sizes):
        """Tile self sizes[a] times along each dim (len(sizes) >= ndim; leading dims are added)."""
        sizes = shape_arg(sizes)
        if len(sizes) < self.ndim:
            raise ShapeError(f"repeat: {len(sizes)} repeat counts for a tensor of {self.ndim} dims ({self.shape})")
        if any(r < 0 for r in sizes):
            raise ValueError(f"repeat: repeat counts must be non-negative, got {sizes}")
        return Repeat.apply(self, reps=sizes)

    def tile(self, *dims):
        """repeat, with missing leading counts taken as 1 (torch.tile)."""
        dims = shape_arg(dims)
        return self.repeat(*((1,) * (self.ndim - len(dims)) + dims))

    def flip(self, *dims):
        dims = tuple(normalize_dim(d, self.ndim, "flip") for d in shape_arg(dims))
        return Flip.apply(self, dims=dims)

    def roll(self, shifts, dims=None):
        """Shift elements cyclically along dims (the flattened tensor when dims is None)."""
        if dims is None:
            return Roll.apply(self, shifts=int(shifts if isinstance(shifts, int) else shifts[0]), dims=None)
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        return Roll.apply(self, shifts=shifts, dims=tuple(normalize_dim(d, self.ndim, "roll") for d in dims))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The diagonal of dims (dim1, dim2), moved last: out[..., k] = self[..., k, k + offset]."""
        d1, d2 = normalize_dim(dim1, self.ndim, "diagonal"), normalize_dim(dim2, self.ndim, "diagonal")
        if d1 == d2:
            raise ValueError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
        return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)  # a view: the op says so (output_views)

    def unfold(self, dimension, size, step):
        """Windows of `size` along dimension, `step` apart, as a new last dim."""
        d = normalize_dim(dimension, self.ndim, "unfold")
        n = self.shape[d] if self.ndim else 1
        if not 0 <= size <= n or step < 1:
            raise ShapeError(f"unfold: size {size} and step {step} do not fit dim {dimension} of size {n}")
        if self.ndim == 0:  # PyTorch: the one element as a window of size 0 or 1, shape (size,)
            return Unfold.apply(self.reshape(1), dim=0, size=size, step=step).reshape(size)
        return Unfold.apply(self, dim=d, size=size, step=step)  # a view: the op says so (output_views)

    # ------------------------------------------------------------------ spellings of the views above
    def movedim(self, source, destination):
        """Move dims `source` to positions `destination` (ints or sequences of one length); the
        other dims keep their order.  A permute."""
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise ShapeError(
                f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the same "
                f"number of dims as destination ({list(dst)} dims)"
            )
        src = tuple(normalize_dim(d, self.ndim, "movedim") for d in src)
        dst = tuple(normalize_dim(d, self.ndim, "movedim") for d in dst)
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise ShapeError(f"movedim: repeated dim in source {list(src)} or destination {list(dst)}")
        rest = iter(d for d in range(self.ndim) if d not in src)
        placed = dict(zip(dst, src))
        axes = tuple(placed[i] if i in placed else next(rest) for i in range(self.ndim))
        return self if self.ndim == 0 else Permute.apply(self, axes=axes)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def t(self):
        """transpose(0, 1) of a matrix; a tensor of at most 1 dim is returned as it is."""
        if self.ndim > 2:
            raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.transpose(0, 1) if self.ndim == 2 else self

    @property
    def mT(self):
        """The last two dims swapped (a batch of matrices transposed)."""
        if self.ndim < 2:
            raise ShapeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def mH(self):
        """The conjugate transpose of the last two dims: mT for real tensors."""
        if self.ndim < 2:
            raise ShapeError(
                f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def H(self):
        """The conjugate transpose of a matrix: T for a real 2-D tensor."""
        if self.ndim not in (0, 2):
            raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return self.transpose(0, 1) if self.ndim == 2 else self

    def adjoint(self):
        return self.mH

    def ravel(self):
        return self.reshape(-1)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def view_as(self, other):
        return self.view(other.shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    def broadcast_to(self, size):
        return self.expand(size)

    def unflatten(self, dim, sizes):
        """Dim `dim` split into `sizes` (one of them may be -1)."""
        d = normalize_dim(dim, self.ndim, "unflatten")
        sizes = tuple(int(s) for s in sizes)
        if not sizes:
            raise ShapeError("unflatten: sizes must be non-empty")
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        n = self.shape[d]
        if sizes.count(-1) > 1 or (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
            raise ShapeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({n}) in the "
                "input tensor"
            )
        return self.reshape(self.shape[:d] + sizes + self.shape[d + 1 :])

    # ------------------------------------------------------------------ slices along one dim (t[index])
    def narrow(self, dim, start, length):
        """self[..., start:start + length, ...] along dim (a negative start counts from the end)."""
        if self.ndim == 0:
            raise IndexError("narrow() cannot be applied to a 0-dim tensor.")
        d = normalize_dim(dim, self.ndim, "narrow")
        if isinstance(start, TensorBase):
            if start.ndim != 0 or start.dtype.kind not in "iu":
                raise RuntimeError("start must be an 0-dim integral Tensor.")
            start = int(start.item())
        n = self.shape[d]
        if not -n <= start <= n:
            raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
        start = start % n if start < 0 else start
        if length < 0 or start + length > n:
            raise ShapeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def narrow_copy(self, dim, start, length):
        return self.narrow(dim, start, length).clone()

    def select(self, dim, index):
        """The slice at `index` of dim (that dim removed): self[..., index, ...]."""
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = normalize_dim(dim, self.ndim, "select")
        index = int(index.item()) if isinstance(index, TensorBase) else int(index)
        n = self.shape[d]
        if not -n <= index < n:
            raise IndexError(
                f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}"
            )
        return self[(slice(None),) * d + (index,)]

    def unbind(self, dim=0):
        """Every slice along dim, as a tuple (each a select)."""
        if self.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        d = normalize_dim(dim, self.ndim, "unbind")
        return tuple(self.select(d, i) for i in range(self.shape[d]))

    def _pieces(self, d, bounds):
        """The slices [bounds[k], bounds[k + 1]) along dim d (each clamped into the dim)."""
        n = self.shape[d]
        out = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
            out.append(self[(slice(None),) * d + (slice(lo, max(lo, hi)),)])
        return tuple(out)

    def tensor_split(self, indices_or_sections, dim=0):
        """n pieces of near-equal size (the first n % size one longer), or pieces cut at the given
        indices, along dim.  Slices of self."""
        if self.ndim == 0:
            raise ShapeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        d = normalize_dim(dim, self.ndim, "tensor_split")
        spec = indices_or_sections
        if isinstance(spec, TensorBase):
            if spec.dtype.kind not in "iu" or spec.ndim > 1:
                raise ShapeError(
                    "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                    f"tensor of integers, but got a tensor with {spec.ndim} dims"
                )
            spec = int(spec.item()) if spec.ndim == 0 else spec.tolist()
        n = self.shape[d]
        if isinstance(spec, int):
            if spec <= 0:
                raise ShapeError(f"number of sections must be larger than 0, got {spec}")
            size, extra = divmod(n, spec)
            bounds = [0]
            for k in range(spec):
                bounds.append(bounds[-1] + size + (1 if k < extra else 0))
        else:
            bounds = [0] + [int(i) + (n if int(i) < 0 else 0) for i in spec] + [n]
        return self._pieces(d, bounds)

    def split_with_sizes(self, split_sizes, dim=0):
        d = normalize_dim(dim, self.ndim, "split_with_sizes")
        sizes = [int(s) for s in split_sizes]
        if any(s < 0 for s in sizes) or sum(sizes) != self.shape[d]:
            raise ShapeError(
                f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
        return self.split(sizes, d)

    def _split_at(self, op, d, min_dims, spec):
        if self.ndim < min_dims:
            raise ShapeError(
                f"torch.{op} requires a tensor with at least {min_dims} dimension, but got a tensor with "
                f"{self.ndim} dimensions!"
            )
        if isinstance(spec, int) and (spec == 0 or self.shape[d] % spec):
            raise ShapeError(
                f"torch.{op} attempted to split along dimension {d}, but the size of the dimension "
                f"{self.shape[d]} is not divisible by the split_size {spec}!"
            )
        return self.tensor_split(spec, d)

    def hsplit(self, indices_or_sections):
        return self._split_at("hsplit", 1 if self.ndim > 1 else 0, 1, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return self._split_at("vsplit", 0, 2, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return self._split_at("dsplit", 2, 3, indices_or_sections)

    # ------------------------------------------------------------------ flips and rotations (Flip, Permute)
    def fliplr(self):
        if self.ndim < 2:
            raise ShapeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self):
        if self.ndim < 1:
            raise ShapeError("Input must be >= 1-d.")
        return self.flip(0)

    def rot90(self, k=1, dims=(0, 1)):
        """Rotate by k quarter turns in the plane of dims, from dims[0] towards dims[1]: a flip of one
        dim and a transpose (k = 1, 3), or a flip of both (k = 2), as PyTorch."""
        dims = tuple(dims)
        if len(dims) != 2:
            raise ShapeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise ShapeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = (normalize_dim(d, self.ndim, "rot90") for d in dims)
        if d0 == d1:
            raise ShapeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip(d0, d1)
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return self.clone()

    # ------------------------------------------------------------------ diagonals (Diagonal, DiagEmbed)
    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """Matrices (on dims dim1, dim2 of the result) whose `offset` diagonal is the last dim of self."""
        n = self.ndim + 1
        d1, d2 = normalize_dim(dim1, n, "diag_embed"), normalize_dim(dim2, n, "diag_embed")
        if d1 == d2:
            raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        x = self if self.ndim else self.reshape(1)
        return DiagEmbed.apply(x, offset=int(offset), dim1=d1, dim2=d2)

    def diag(self, diagonal=0):
        """1-D: the square matrix with self on its `diagonal`;  2-D: that diagonal of self, a copy
        (PyTorch's diag copies where `diagonal` is a view)."""
        if self.ndim == 1:
            return self.diag_embed(diagonal)
        if self.ndim == 2:
            return self.diagonal(diagonal).clone()
        raise ShapeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def diagflat(self, offset=0):
        return self.reshape(-1).diag_embed(offset)

    # ------------------------------------------------------------------ differences (slices and a subtraction)
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """out[i] = x[i + 1] - x[i] along dim, n times, x = cat(prepend, self, append); bool: x[i + 1] != x[i]."""
        if self.ndim == 0:
            raise ShapeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise ShapeError(f"order must be non-negative but got {n}")
        d = normalize_dim(dim, self.ndim, "diff")
        if n == 0:  # PyTorch returns the input as it is, prepend and append unused
            return self
        parts = []
        for extra, name in ((prepend, "prepend"), (append, "append")):
            if extra is None:
                parts.append(None)
                continue
            if not isinstance(extra, TensorBase):
                extra = self._constant(extra, dtype=self.dtype)
            if extra.ndim == 0:
                extra = extra.expand(*(self.shape[:d] + (1,) + self.shape[d + 1 :]))
            if extra.ndim != self.ndim:
                raise ShapeError(f"diff expects {name} or input to be the same dimension as input, got {extra.ndim}D")
            parts.append(extra)
        pieces = [p for p in (parts[0], self, parts[1]) if p is not None]
        x = self if len(pieces) == 1 else _cat_along(pieces, d)
        for _ in range(n):
            m = x.shape[d]
            hi = x[(slice(None),) * d + (slice(1, max(m, 1)),)]
            lo = x[(slice(None),) * d + (slice(0, max(m - 1, 0)),)]
            x = (hi != lo) if x.dtype == backend.bool_ else hi - lo
        return x

    # ------------------------------------------------------------------ new tensors like self (no graph)
    def _new(self, size, fill, dtype, device, requires_grad):
        xp = backend.namespace(backend.normalize_device(device) if device is not None else self.device)
        out = xp.full(shape_arg(size), fill, dtype=backend.as_dtype(dtype) or self.dtype)
        t = self._make(out, backend.normalize_device(device) if device is not None else self.device, False)
        return t.requires_grad_(True) if requires_grad else t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(size, 0, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(size, 1, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(size, 0, dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return self._new((size,), fill_value, dtype, device, requires_grad)


def _cat_along(tensors, d):
    """Concatenation along d for diff's prepend / append (Cat), dtypes promoted; the other dims must agree."""
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = backend.result_type(dtype, t.dtype)
    first = tensors[0].shape
    for t in tensors[1:]:
        if t.shape[:d] + t.shape[d + 1 :] != first[:d] + first[d + 1 :]:
            raise ShapeError(f"diff: shapes {first} and {t.shape} differ outside dim {d}")
    return Cat.apply(*(t if t.dtype == dtype else t.to(dtype) for t in tensors), axis=d)
