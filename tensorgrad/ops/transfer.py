"""Moving a tensor between devices, as a differentiable op."""

from __future__ import annotations

from .. import backend
from ..autograd import Function


class ToDevice(Function):
    """$z$ = $x$ copied to another device.  $dx$ = $g$ copied back to $x$'s device.

    The output lives on a different device than the input, so `Tensor._to_device` builds
    this node by hand instead of through `apply` (which keeps the input's device).
    """

    def forward(self, x, device):  # pragma: no cover - see Tensor._to_device
        raise NotImplementedError

    def backward(self, g):
        (device,) = self.saved
        return backend.to_device(g, device)

    def backward_graph(self, g, z):
        """Tensor-level (create_graph): $dx$ = $g$ moved back to $x$'s device, a recorded move (linear)."""
        (device,) = self.saved
        return g.to(device)
