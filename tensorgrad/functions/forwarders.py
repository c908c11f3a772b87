"""The tg.* functions that only call their Tensor method: `tg.exp(x)` is `x.exp()`, `tg.sum(x, 1)`
is `x.sum(1)`.  They are not written out one by one: each is generated here from the table of
public names (tensorgrad/_public_names.py, the names under FORWARD) and its Tensor method.

A generated function has the method's signature with `self` named `input` (PyTorch's name), so
`inspect.signature`, `help()` and a wrong argument's TypeError read as for a function written out;
the method's docstring (or, where it has none, a line saying which method it calls); the method's
`keepdims=` alias where the method has one (tensor_methods/common.py, accepts_keepdims); and, when
`input` is not a Tensor, PyTorch's TypeError: "exp(): argument 'input' (position 1) must be
Tensor, not int".  The source is compiled once, at import, as dataclasses and namedtuple do, and
kept in linecache, so `inspect.getsource(tg.exp)` and the traceback module (pytest, IPython) show
the generated lines.

A function that does more than forward (a number on either side, several tensors, a signature of
its own) is written out in this package's family modules and named in the table under its module.
"""

from __future__ import annotations

import builtins  # this module defines any, max, sum, ... (the generated functions): builtins.X is the built-in one
import inspect
import linecache

from .. import _public_names
from ..tensor import Tensor
from ..tensor_methods.common import accepts_keepdims

_KINDS = inspect.Parameter


def _not_a_tensor(name: str, input) -> None:
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _source(name: str, method, defaults: dict) -> str:
    """The text of `def name(input, ...): return input.name(...)` with the method's parameters;
    each default is a name bound in `defaults` (any object, not only what repr() spells)."""
    params = list(inspect.signature(method).parameters.values())[1:]  # after self
    if builtins.any(p.name == "input" for p in params):
        raise TypeError(f"Tensor.{name} has a parameter named 'input': its tg.{name} must be written out")
    spelled, passed, star = ["input"], [], False
    for p in params:
        text = p.name
        if p.default is not _KINDS.empty:
            key = f"_{name}_{p.name}"
            defaults[key] = p.default
            text += f"={key}"
        if p.kind is _KINDS.VAR_POSITIONAL:
            text, star = f"*{p.name}", True
            passed.append(text)
        elif p.kind is _KINDS.VAR_KEYWORD:
            text = f"**{p.name}"
            passed.append(text)
        elif p.kind is _KINDS.KEYWORD_ONLY:
            if not star:
                spelled.append("*")
                star = True
            passed.append(f"{p.name}={p.name}")
        else:
            passed.append(p.name)
        spelled.append(text)
    if builtins.any(p.kind is _KINDS.POSITIONAL_ONLY for p in params):
        last = builtins.max(i for i, p in enumerate(params) if p.kind is _KINDS.POSITIONAL_ONLY)
        spelled.insert(last + 2, "/")
    return (
        f"def {name}({', '.join(spelled)}):\n"
        f"    if not isinstance(input, Tensor):\n"
        f"        _not_a_tensor({name!r}, input)\n"
        f"    return input.{name}({', '.join(passed)})\n"
    )


def _generate() -> dict:
    """public name -> generated function, for every FORWARD name of the table."""
    methods = {attr for _, source, _, attr in _public_names.entries() if source == _public_names.FORWARD}
    namespace: dict = {"Tensor": Tensor, "_not_a_tensor": _not_a_tensor}
    text = "".join(_source(name, getattr(Tensor, name), namespace) for name in sorted(methods))
    filename = f"<{__name__}: generated from tensorgrad/_public_names.py>"
    # the source where inspect.getsource and tracebacks look for it (an entry without mtime is kept)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)
    made = {}
    for name in methods:
        method, fn = getattr(Tensor, name), namespace[name]
        fn.__module__, fn.__qualname__ = __name__, name
        fn.__doc__ = method.__doc__ or (
            f"tg.{name}(input, ...) is input.{name}(...): the function form of the Tensor method Tensor.{name}."
        )
        annotations = getattr(inspect.unwrap(method), "__annotations__", {})
        fn.__annotations__ = {k: v for k, v in annotations.items() if k != "self"}
        made[name] = accepts_keepdims(fn) if getattr(method, "accepts_keepdims", False) else fn
    return {
        public: made[attr] for _, source, public, attr in _public_names.entries() if source == _public_names.FORWARD
    }


globals().update(_FORWARDERS := _generate())
__all__ = list(_FORWARDERS)
