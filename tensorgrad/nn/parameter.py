"""Parameter: a Tensor that a Module registers as something to train."""

from __future__ import annotations

from .. import backend
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor with requires_grad=True that, assigned as a Module attribute
    (`self.weight = Parameter(...)`), is registered in the module's parameters().

    It shares the array of the tensor it wraps (as torch.nn.Parameter does).  Ops on a
    Parameter return plain Tensors; only the leaf itself is a Parameter.
    """

    __slots__ = ()
    # The engine makes an op's result with type(first input)._make: here, a plain Tensor (and so is
    # the Parameter's .grad), as in PyTorch.
    _make = staticmethod(Tensor._make)

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = Tensor(backend.namespace("cpu").empty((0,), dtype=backend.float32))
        elif not isinstance(data, Tensor):
            data = Tensor(data)
        self._data = data._data
        self._counter = data._counter  # the same storage: the same version counter
        self.device = data.device
        self._grad = None
        self._ctx = None
        self._hooks = None
        self.requires_grad = False
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
