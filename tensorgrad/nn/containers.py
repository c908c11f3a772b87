"""Containers that register the modules they hold: ModuleList, ModuleDict, Sequential.

A plain Python list of layers is invisible to parameters(), state_dict() and to(); put the
layers in a ModuleList instead and they are children named "0", "1", ...
"""

from __future__ import annotations

from .module import Module


class ModuleList(Module):
    """A list of modules, registered as children "0", "1", ... (it has no forward)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx: int) -> str:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for a ModuleList of length {n}")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module):
        self.add_module(self._index(idx), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)


class ModuleDict(Module):
    """A dict of modules, registered as children under their keys (nanoGPT's `transformer`)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            for name, m in dict(modules).items():
                self[name] = m

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module):
        self.add_module(key, module)

    def __delitem__(self, key: str):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class Sequential(Module):
    """Sequential(m0, m1, ...): forward(x) = m1(m0(x))... ; children named "0", "1", ..."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            return Sequential(*items[idx])
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range for a Sequential of length {len(items)}")
        return items[idx]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x
