"""tensorgrad: N-d tensors with reverse-mode autodiff, every backward written by hand.

Read in this order: backend.py (NumPy / CuPy), autograd.py (Function, the backward
pass), tensor.py (the Tensor and its methods), ops/ (one file per family of ops, each
backward's derivation in its docstring), nn/, optim/.  creation.py (tg.tensor, tg.zeros, ...)
and functions/ (tg.cat, tg.where, tg.sum, ..., one module per family) are the functions of this
namespace.

The names of this namespace, and where each comes from, are one table: _public_names.py.  A name
is added there, and only there: this module imports each name the table gives (a module's
attribute, or the function functions/forwarders.py generates for a Tensor method), and lists them
in `__all__` in the table's order; tools/api_pages.py writes the API reference from the same table,
and tools/public_stubs.py the stub __init__.pyi through which static tools see these names.
"""

import importlib as _importlib
import sys as _sys

__version__ = "0.1.0"  # the one place the version is written; setup.cfg reads it

# custom_function registers the PyTorch form of Function with the engine, and kernels registers
# each device's kernel loader with the engine's registry: both must be imported here.
from . import _public_names, custom_function, kernels  # noqa: F401
from .functions import forwarders as _forwarders


def _import_public_names() -> list:
    """Bind every name of the table here; the names, in the table's order (this module's __all__)."""
    names = []
    for _family, source, public, attr in _public_names.entries():
        if source == _public_names.MODULES:
            value = _importlib.import_module(f"{__name__}.{attr}")
        elif source == _public_names.FORWARD:
            value = getattr(_forwarders, attr)
        else:
            value = getattr(_importlib.import_module(f"{__name__}.{source}"), attr)
        globals()[public] = value
        names.append(public)
    return names


__all__ = _import_public_names()

# tg.autograd.gradcheck, as torch.autograd.gradcheck: gradcheck works on Tensors, a layer above the
# engine, so the engine module cannot import it; the package that imports both joins them here.
# (tg.gradgradcheck is bound here too, outside __all__, as it always was.)
from . import autograd as _autograd  # noqa: E402 - after the table's names, as the joins below need them
from . import autograd_functional as _autograd_functional  # noqa: E402
from .gradcheck import GradcheckError as _GradcheckError  # noqa: E402
from .gradcheck import gradcheck as _gradcheck  # noqa: E402
from .gradcheck import gradgradcheck  # noqa: E402
from .hooks import grad as _autograd_grad  # noqa: E402

_autograd.gradcheck, _autograd.gradgradcheck, _autograd.GradcheckError = _gradcheck, gradgradcheck, _GradcheckError
# tg.autograd.grad, as torch.autograd.grad: it lives in hooks.py, beside the tensor hooks it shares
# the engine's reverse pass with (the engine module imports nothing of them).
_autograd.grad = _autograd_grad
# tg.autograd.functional (vjp, jvp, hvp, vhp, jacobian, hessian), as torch.autograd.functional: built
# on Tensors and tg.autograd.grad, so it too is joined here; registered under its dotted name so
# that `from tensorgrad.autograd.functional import jacobian` works as PyTorch's spelling does.
_autograd.functional = _autograd_functional
_sys.modules[f"{__name__}.autograd.functional"] = _autograd_functional
