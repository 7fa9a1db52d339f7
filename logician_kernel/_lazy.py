"""A package's exported names, each imported from its module on first use (PEP 562).

A package `__init__` lists its names under `if TYPE_CHECKING:` (what mypy and readers see)
and, for the interpreter, `__getattr__ = exports(__name__, WHERE)`: a kernel's start then
loads only the modules its first cell needs, not every command's (start time and idle memory
are ipykernel's, `docs/benchmarks.md`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, where: Mapping[str, tuple[str, str]]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: name -> (its module, relative to the package, and the
    name there), imported once and kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(found[0], package), found[1])
        vars(sys.modules[package])[name] = value
        return value

    return __getattr__
