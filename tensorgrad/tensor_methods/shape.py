"""Tensor methods, shape: reshape and view, permutations, squeeze and expand, splits
(ops/shape.py), and the rearrangements that copy: repeat, flip, roll, diagonal, unfold
(ops/rearrange.py)."""

from __future__ import annotations

import math

from .. import backend
from ..autograd import is_grad_enabled
from ..backend import ShapeError
from ..ops.rearrange import Diagonal, Flip, Repeat, Roll, Unfold
from ..ops.shape import Expand, Permute, Reshape
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
        """view(shape) as reshape; view(dtype) reinterprets the bytes as another dtype (no copy,
        the same storage and version counter, outside the graph), as in PyTorch."""
        arg = shape_or_dtype[0] if len(shape_or_dtype) == 1 else None
        if arg is None or isinstance(arg, (int, tuple, list)):
            return self.reshape(*shape_or_dtype)
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
        return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)

    def unfold(self, dimension, size, step):
        """Windows of `size` along dimension, `step` apart, as a new last dim."""
        d = normalize_dim(dimension, self.ndim, "unfold")
        n = self.shape[d] if self.ndim else 1
        if not 0 <= size <= n or step < 1:
            raise ShapeError(f"unfold: size {size} and step {step} do not fit dim {dimension} of size {n}")
        if self.ndim == 0:  # PyTorch: the one element as a window of size 0 or 1, shape (size,)
            return Unfold.apply(self.reshape(1), dim=0, size=size, step=step).reshape(size)
        return Unfold.apply(self, dim=d, size=size, step=step)
