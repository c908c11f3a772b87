"""tg.linalg, as torch.linalg: cross, vecdot, the norms (vector_norm, matrix_norm, norm), and the
matrix functions and decompositions (det, slogdet, inv, solve, solve_triangular, cholesky, eigh,
eigvalsh, svdvals, qr, pinv, and their compositions matrix_power, matrix_rank, multi_dot, cond,
tensorinv, tensorsolve, vander), with the top-level spellings torch has for some (logdet,
pinverse, cholesky_solve, cholesky_inverse, triangular_solve; tg.X).

The vector norms, the norms of the singular values (ord 2, -2, 'nuc') and the cross product have
their own backward (ops/linalg.py), as do the decompositions (ops/decompositions.py); vecdot, the
other matrix norms and the compositions above take their gradients from the ops they are made of.
A matrix an op cannot take (singular, not positive-definite) raises tg.linalg.LinAlgError, a
RuntimeError, as torch.linalg.LinAlgError.

One module per family: norms.py (norm, vector_norm, matrix_norm, cond), products.py (cross,
vecdot, multi_dot, vander, diagonal), decompositions.py (det, slogdet, cholesky, cholesky_ex,
eigh, svd, qr, householder_product, ...; torch.svd, torch.qr), solvers.py (inv, inv_ex, solve,
solve_ex, solve_triangular, pinv, matrix_rank, lstsq, tensorinv, tensorsolve; cholesky_solve, ...),
matrix_functions.py (matrix_power, matrix_exp) and errors.py (the argument checks and LAPACK's
info, with PyTorch's messages, that the others share)."""

from ..backend import LinAlgError

# __all__'s names, and (noqa: F401) the named tuples and the top-level spellings tg takes (logdet, torch_qr, ...)
from .decompositions import (  # noqa: F401
    CholeskyExResult,
    DetResult,
    EighResult,
    QRResult,
    SVDResult,
    TorchSVDResult,
    cholesky,
    cholesky_ex,
    det,
    eigh,
    eigvalsh,
    householder_product,
    logdet,
    qr,
    slogdet,
    svd,
    svdvals,
    torch_qr,
    torch_svd,
)
from .matrix_functions import matrix_exp, matrix_power
from .norms import cond, matrix_norm, norm, vector_norm
from .products import cross, diagonal, multi_dot, vander, vecdot
from .solvers import (  # noqa: F401
    InvExResult,
    LstsqResult,
    SolveExResult,
    TriangularSolveResult,
    cholesky_inverse,
    cholesky_solve,
    inv,
    inv_ex,
    lstsq,
    matrix_rank,
    pinv,
    pinverse,
    solve,
    solve_ex,
    solve_triangular,
    tensorinv,
    tensorsolve,
    triangular_solve,
)

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "householder_product", "inv", "inv_ex", "lstsq", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]  # fmt: skip
