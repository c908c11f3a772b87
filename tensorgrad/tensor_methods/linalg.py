"""Tensor methods, linear algebra: the matrix products (mm, bmm, mv, dot, inner, outer, kron and the
fused `add*` forms, beta * input + alpha * product), cross, trace and the norms.

Every product here is a composition of matmul (ops/matmul.py), einsum (ops/einsum.py) and
elementwise ops, so its gradient is theirs; cross, the vector norms and the norms of the singular
values have their own backward (ops/linalg.py).  PyTorch's argument checks come first, with its
exception types: the matrix products refuse operands of different dtypes (they do not promote),
as PyTorch does."""

from __future__ import annotations

import math

from .. import backend
from ..backend import ShapeError
from ..ops.einsum import Einsum
from ..ops.linalg import Cross, SingularValueNorm, VectorNorm
from .common import TensorBase, broadcast_shapes, normalize_dim, normalize_dims, torch_dtype_name


def same_dtype(op: str, a, b, names=("self", "mat2")):
    """PyTorch's matrix products do not promote: operands of two dtypes are refused."""
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{op}: {names[0]} and {names[1]} must have the same dtype, but got "
            f"{torch_dtype_name(a.dtype)} and {torch_dtype_name(b.dtype)}"
        )


def need_dims(op: str, t, ndim: int, what: str):
    if t.ndim != ndim:
        raise ShapeError(f"{op}: {what} must be a {ndim}-D tensor, got {t.ndim}-D tensor of shape {t.shape}")


def check_scalars(op: str, t, **scalars):
    """alpha, beta, value: a float with integer tensors is refused, as in PyTorch."""
    if not backend.is_floating(t.dtype):
        for name, v in scalars.items():
            if isinstance(v, float) or (isinstance(v, TensorBase) and backend.is_floating(v.dtype)):
                raise RuntimeError(
                    f"{op}: for integral input tensors, argument {name} must not be a floating point number."
                )


def scaled_sum(op: str, input, product, beta, alpha):
    """beta * input + alpha * product, input broadcast to the product's shape.  beta = 0 ignores
    input (its nan and inf do not propagate), as PyTorch."""
    if not isinstance(input, TensorBase):
        input = product._constant(input, dtype=product.dtype)
    if broadcast_shapes(op, input.shape, product.shape) != product.shape:
        raise ShapeError(
            f"{op}: input of shape {input.shape} does not broadcast to the product's shape {product.shape}"
        )
    same_dtype(op, input, product, ("input", "the product"))
    check_scalars(op, input, beta=beta, alpha=alpha)
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


class LinalgMixin(TensorBase):
    __slots__ = ()

    # ------------------------------------------------------------------ matrix products (matmul)
    def mm(self, mat2):
        """(n, k) @ (k, m): 2-D operands only, of one dtype."""
        if self.ndim != 2:
            raise ShapeError("mm: self must be a matrix")
        if not isinstance(mat2, TensorBase) or mat2.ndim != 2:
            raise ShapeError("mm: mat2 must be a matrix")
        if self.shape[1] != mat2.shape[0]:
            raise ShapeError(
                f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                f"{mat2.shape[0]}x{mat2.shape[1]})"
            )
        same_dtype("mm", self, mat2)
        return self.matmul(mat2)

    def bmm(self, mat2):
        """(b, n, k) @ (b, k, m): 3-D operands with the same batch size (no broadcasting)."""
        need_dims("bmm", self, 3, "batch1")
        need_dims("bmm", mat2, 3, "batch2")
        if mat2.shape[:2] != (self.shape[0], self.shape[2]):
            raise ShapeError(
                f"bmm: expected size for first two dimensions of batch2 tensor to be: "
                f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
            )
        same_dtype("bmm", self, mat2)
        return self.matmul(mat2)

    def mv(self, vec):
        """(n, m) @ (m,)."""
        need_dims("mv", self, 2, "mat")
        need_dims("mv", vec, 1, "vec")
        if self.shape[1] != vec.shape[0]:
            raise ShapeError(f"mv: size mismatch, got mat ({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})")
        same_dtype("mv", self, vec, ("mat", "vec"))
        return self.matmul(vec)

    def dot(self, other):
        """sum_i self_i other_i of two 1-D tensors of one size and dtype (a 0-d tensor)."""
        need_dims("dot", self, 1, "self")
        need_dims("dot", other, 1, "other")
        if self.shape != other.shape:
            raise ShapeError(f"dot: inconsistent tensor size, got {self.shape[0]} and {other.shape[0]} elements")
        same_dtype("dot", self, other, ("self", "other"))
        return self.matmul(other)

    def vdot(self, other):
        """conj(self) . other: dot for real tensors (tensorgrad has no complex dtype)."""
        return self.dot(other)

    def inner(self, other):
        """Sum over the last dims: out[I, J] = sum_k self[I, k] other[J, k]; a 0-d operand multiplies."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise ShapeError(f"inner: the last dims of {self.shape} and {other.shape} differ")
        return tensordot(self, other, ([-1], [-1]))

    def outer(self, vec2):
        """out[i, j] = self_i vec2_j (an elementwise product of a column and a row)."""
        need_dims("outer", self, 1, "self")
        need_dims("outer", vec2, 1, "vec2")
        return self.reshape(-1, 1) * vec2.reshape(1, -1)

    ger = outer

    def kron(self, other):
        """The Kronecker product: out[i * m + k, ...] = self[i, ...] other[k, ...] (the operands' dims
        padded with leading 1s to the same number), an elementwise product of interleaved axes."""
        n = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + self.shape)
        b = other.reshape((1,) * (n - other.ndim) + other.shape)
        a_split = sum(((s, 1) for s in a.shape), ())
        b_split = sum(((1, s) for s in b.shape), ())
        return (a.reshape(a_split) * b.reshape(b_split)).reshape(tuple(p * q for p, q in zip(a.shape, b.shape)))

    def trace(self):
        """The sum of the main diagonal of a matrix."""
        if self.ndim != 2:
            raise ShapeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        return self.diagonal().sum()

    # ------------------------------------------------------------------ beta * input + alpha * product
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return scaled_sum("addmm", self, mat1.mm(mat2), beta, alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return scaled_sum("addmv", self, mat.mv(vec), beta, alpha)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        need_dims("addr", vec1, 1, "vec1")
        need_dims("addr", vec2, 1, "vec2")
        return scaled_sum("addr", self, vec1.outer(vec2), beta, alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return scaled_sum("baddbmm", self, batch1.bmm(batch2), beta, alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
        return scaled_sum("addbmm", self, batch1.bmm(batch2).sum(0), beta, alpha)

    def addcmul(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 * tensor2 (all three broadcast and promote)."""
        check_scalars("addcmul", tensor1, value=value)
        product = tensor1 * tensor2
        return self + (product if value == 1 else product * value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 / tensor2; integer tensor1 and tensor2 are refused, as PyTorch."""
        if not backend.is_floating(tensor1.dtype) and not backend.is_floating(tensor2.dtype):
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
                "a true division of tensor1 and tensor2."
            )
        check_scalars("addcdiv", self, value=value)
        quotient = tensor1 / tensor2
        return self + (quotient if value == 1 else quotient * value)

    # in place (the optimizers' spelling): the out-of-place result written back with copy_, recorded
    def addcmul_(self, tensor1, tensor2, *, value=1):
        return self.copy_(self.addcmul(tensor1, tensor2, value=value))

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return self.copy_(self.addcdiv(tensor1, tensor2, value=value))

    # ------------------------------------------------------------------ cross product (ops/linalg.py)
    def cross(self, other, dim=None):
        """self x other along dim (size 3); dim=None: the first dim of size 3, as torch.cross."""
        if dim is None:
            shape = broadcast_shapes("cross", self.shape, other.shape) if self.ndim == other.ndim else self.shape
            dim = next((i for i, n in enumerate(shape) if n == 3), None)
            if dim is None:
                raise ShapeError(f"cross: no dimension of size 3 in input of shape {self.shape}")
        return linalg_cross(self, other, dim=dim)

    # ------------------------------------------------------------------ norms
    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """torch.norm: 'fro' (and any p) is the vector p-norm over dim (every element when None);
        'nuc' the nuclear norm of the matrices on dim (the last two when None)."""
        if p == "nuc":
            return matrix_norm(self, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
        if p == "fro":
            p = 2
        return vector_norm(self, p, dim, keepdim, dtype=dtype)

    def dist(self, other, p=2):
        """||self - other||_p over every element (self and other broadcast)."""
        return vector_norm(self - other, p)


def tensordot(a, b, dims=2):
    """Contract dims of a with dims of b: `dims` an int n (a's last n with b's first n) or a pair of
    lists.  An einsum (ops/einsum.py) whose subscripts name the contracted axes alike."""
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a = [normalize_dim(d, a.ndim, "tensordot") for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim, "tensordot") for d in dims_b]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    sa = list(letters[: a.ndim])
    sb = list(letters[a.ndim : a.ndim + b.ndim])
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db] and 1 not in (a.shape[da], b.shape[db]):  # a size 1 broadcasts
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} and second "
                f"has size {b.shape[db]} in dim {db}"
            )
        sb[db] = sa[da]
    out = [c for i, c in enumerate(sa) if i not in dims_a] + [c for i, c in enumerate(sb) if i not in dims_b]
    return Einsum.apply(a, b, terms=("".join(sa), "".join(sb)), output="".join(out))


def linalg_cross(input, other, *, dim=-1):
    """torch.linalg.cross: input x other along dim (size 3 in both); the other dims broadcast."""
    if input.ndim != other.ndim:
        raise ShapeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, input.ndim, "linalg.cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ShapeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and {other.shape[d]}"
        )
    if input.dtype != other.dtype:
        expected, found = torch_dtype_name(input.dtype), torch_dtype_name(other.dtype)
        raise RuntimeError(f"expected scalar type {expected} but found {found}")
    broadcast_shapes("linalg.cross", input.shape, other.shape)
    return Cross.apply(input, other, dim=d)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's name)
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over dim (every element when None), with
    ord 0 (count of nonzeros), inf (max |x|), -inf (min |x|).  Floating tensors only."""
    if not backend.is_floating(x.dtype):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {torch_dtype_name(x.dtype)}"
        )
    if isinstance(ord, str) or isinstance(ord, bool):
        raise TypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    ord = float(ord)
    if dtype is not None:
        x = x.to(dtype)
    dims = normalize_dims(dim, x.ndim, "linalg.vector_norm") if dim is not None else tuple(range(x.ndim))
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dims = tuple(range(x.ndim))
    if ord < 0 or ord == math.inf:
        if any(x.shape[d] == 0 for d in dims) or (x.ndim == 0 and x.numel() == 0):
            shown = "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {shown} norm on an empty tensor because the operation "
                "does not have an identity"
            )
    return VectorNorm.apply(x, ord=ord, dims=dims, keepdim=bool(keepdim) and x.ndim > 0)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's name)
    """The norm of the matrices on dims `dim`: 'fro' (the 2-norm of their elements), 1 / -1 (the
    largest / smallest column sum of |A|), inf / -inf (the largest / smallest row sum), 'nuc' (the
    sum of the singular values), 2 / -2 (the largest / smallest singular value)."""
    if A.ndim < 2:
        raise ShapeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not backend.is_floating(A.dtype):
        raise RuntimeError(
            f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got {torch_dtype_name(A.dtype)}"
        )
    dim = tuple(dim)
    if len(dim) != 2:
        raise ShapeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (normalize_dim(d, A.ndim, "linalg.matrix_norm") for d in dim)
    if d0 == d1:
        raise ShapeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        if ord != "nuc" and 0 in moved.shape[-2:]:
            raise RuntimeError(f"linalg.matrix_norm: the {ord} norm of an empty matrix is not defined")
        if 0 in moved.shape[-2:]:
            out = moved.sum((-2, -1))  # no singular values: the nuclear norm is 0
        else:
            out = SingularValueNorm.apply(moved, ord=ord)
        return out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else out
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)  # column sums (ord +-1) or row sums (+-inf)
    if A.shape[reduced] == 0:  # a max or min over nothing (an empty sum is 0: fine)
        raise RuntimeError(f"linalg.matrix_norm: the {ord} norm of an empty matrix is not defined")
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(reduced, keepdim=True) if ord > 0 else sums.amin(reduced, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))
