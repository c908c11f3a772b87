"""Module: the base class of every layer and model, as torch.nn.Module.

What it does for a subclass, all driven by plain attribute assignment in __init__:

    self.fc = Linear(4, 8)                      -> a child module   (named "fc")
    self.scale = Parameter(tg.ones(8))          -> a parameter      ("scale")
    self.register_buffer("mask", tg.ones(8))    -> a buffer         ("mask"): state, not trained
    self.cache = tg.zeros(8)                    -> a plain attribute: not in parameters(),
                                                   not in state_dict(), not moved by to()
    self.blocks = [Linear(4, 4)]                -> a plain list: its modules are invisible
                                                   (use ModuleList)

Every walk (parameters(), state_dict(), to(), train()) follows the tree of child modules,
and names are dotted paths through it: "blocks.0.weight", PyTorch's state_dict keys.
"""

from __future__ import annotations

import collections

from .. import backend
from ..hooks import RemovableHandle
from ..tensor import Tensor
from .module_hooks import call_with_hooks
from .parameter import Parameter

IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """Subclass it, call super().__init__() first, assign layers and parameters, write forward()."""

    def __init__(self):
        # object.__setattr__: these four are the registry itself, not things to register.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # Hooks: None until the first is registered (a class attribute, so a module without hooks,
    # or one made before hooks existed, is called without looking further).
    _forward_pre_hooks = None
    _forward_hooks = None
    _backward_hooks = None
    _has_hooks = False

    def __call__(self, *args, **kwargs):
        if not self._has_hooks:
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    def _add_hook(self, kind, hook):
        registry = self.__dict__.get(kind)
        if registry is None:
            registry = {}
            object.__setattr__(self, kind, registry)
        handle = RemovableHandle(registry)
        registry[handle.id] = hook
        object.__setattr__(self, "_has_hooks", True)
        return handle

    def register_forward_pre_hook(self, hook):
        """Run `hook(module, args)` before each forward; it may return new args (a tuple, or one
        value taken as a 1-tuple).  Returns a handle: `handle.remove()`."""
        return self._add_hook("_forward_pre_hooks", hook)

    def register_forward_hook(self, hook):
        """Run `hook(module, args, output)` after each forward; it may return a new output.
        Returns a handle: `handle.remove()`."""
        return self._add_hook("_forward_hooks", hook)

    def register_full_backward_hook(self, hook):
        """Run `hook(module, grad_input, grad_output)` when the gradients with respect to the
        module's tensor inputs have been computed: tuples of the gradients of its tensor inputs
        (None for one that does not require grad) and of its tensor outputs.  It may return a new
        grad_input, used in its place.  Returns a handle: `handle.remove()`.
        In the engine: the module's inputs and outputs pass through identity ops whose tensors
        carry tensor hooks; see nn/module_hooks.py."""
        return self._add_hook("_backward_hooks", hook)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, (Parameter, Module)) and params is None:
            raise AttributeError(
                f"cannot assign {type(value).__name__} '{name}' before Module.__init__() call: "
                f"call super().__init__() first in {type(self).__name__}.__init__"
            )
        if isinstance(value, Parameter):
            self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
            self._forget(name)
            self._modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' (nn.Parameter or None expected)"
                )
            params[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            self._buffers[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}'")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        """Drop `name` from every registry and from __dict__ before it is registered anew."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name):
        # Only called when ordinary lookup fails: registered things live in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                del self.__dict__[registry][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def _check_new_name(self, name, kind):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot register a {kind} before Module.__init__() call")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"{kind} name must be a non-empty string without '.', got {name!r}")
        known = name in self._parameters or name in self._buffers or name in self._modules
        if hasattr(self, name) and not known:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True):
        """A tensor that is module state but not a parameter (a causal mask, running stats):
        it moves with to(), and is in state_dict() unless persistent=False."""
        self._check_new_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' as buffer '{name}' (Tensor or None expected)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers.add(name)

    def register_parameter(self, name: str, param: Parameter | None):
        self._check_new_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' as parameter '{name}' (nn.Parameter expected)")
        self._forget(name)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None):
        self._check_new_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # ------------------------------------------------------------------ walking the tree
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """(dotted name, module) for self and every descendant, depth first; a module reached
        twice is listed once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry, prefix, recurse, remove_duplicate=True):
        seen = set()  # ids: tensors compare elementwise, so `in` on a list of them would not work
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, t in getattr(module, registry).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """("fc.weight", Parameter), ...; a parameter shared by two modules is listed once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """fn(module) for every child (recursively), then for self; returns self (e.g. custom init)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and gradients
    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be a bool")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad._data[...] = 0
                p.grad._bump_version()

    # ------------------------------------------------------------------ device and dtype
    def to(self, *args, device=None, dtype=None):
        """to(device), to(dtype), to(device, dtype) or to(tensor): moves parameters, their
        gradients and buffers in place (the Parameter objects stay, so an optimizer built
        before still holds them).  A dtype casts floating-point tensors only, as in PyTorch."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, str) or a is None:
                device = a
            else:
                dtype = a
        device = backend.normalize_device(device) if device is not None else None
        dtype = backend.as_dtype(dtype)
        if dtype is not None and not backend.is_floating(dtype):
            raise TypeError(f"Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t: Tensor):
            data = t._data
            if device is not None and device != t.device:
                data = backend.to_device(data, device)
            if dtype is not None and backend.is_floating(data.dtype) and data.dtype != dtype:
                data = data.astype(dtype)
            t._data = data
            t.device = device or t.device

        for p in self.parameters():
            convert(p)
            if p.grad is not None:
                convert(p.grad)
        for b in self.buffers():
            convert(b)
        return self

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def float(self):
        return self.to(backend.float32)

    def double(self):
        return self.to(backend.float64)

    # ------------------------------------------------------------------ state dict
    def _state_items(self, prefix=""):
        """(key, tensor) for every parameter and persistent buffer, own ones first, then each
        child's under "child." (no de-duplication: tied weights appear under both keys)."""
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                yield prefix + name, b
        for name, child in self._modules.items():
            if child is not None:
                yield from child._state_items(prefix + name + ".")

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False) -> dict:
        """{"fc.weight": tensor, ...}: parameters and persistent buffers.  The tensors are
        detached but share memory with the module (copy them to keep a snapshot)."""
        out = {} if destination is None else destination
        for key, t in self._state_items(prefix):
            out[key] = t if keep_vars else t.detach()
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True):
        """Copy every entry into the matching parameter or buffer (in place: same objects,
        their own device and dtype).  Refuses, naming the keys, missing and unexpected keys
        (when strict) and shape mismatches (always); nothing is copied if anything is wrong."""
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        sources = {}
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying "{key}": expected a Tensor, got {type(value).__name__}.')
                continue
            if value.shape != target.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {target.shape}."
                )
                continue
            sources[key] = value
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for key, value in sources.items():
            target = own[key]
            data = backend.to_device(value._data, target.device)
            target._data[...] = data.astype(target.dtype, copy=False)
            target._bump_version()
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ repr
    def extra_repr(self) -> str:
        """The part inside the parentheses of this module's one-line repr (layers override it)."""
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_repr}")
        head = type(self).__name__ + "("
        if not self._modules and len(lines) <= 1:
            return head + (lines[0] if lines else "") + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"
