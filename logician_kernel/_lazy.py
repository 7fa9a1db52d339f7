"""A package's exported names, each imported from its module on first use (PEP 562).

A package `__init__` imports its names under `if TYPE_CHECKING:` (what mypy and readers see)
and, for the interpreter, sets `__getattr__ = exports(__name__)`: the first time a name is
asked for, that block's `from .module import name` lines are read from the package's source
(one place says where each name lives) and the name is imported from its module and kept in
the package. A kernel's start then loads only the modules its first cell needs, not every
command's (start time and idle memory are ipykernel's, `docs/benchmarks.md`).

A name equal to one of the package's modules' names cannot be lazy (importing that module
binds the package's attribute to the module): such a package imports it eagerly.
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from collections.abc import Callable
from typing import Any

_BLOCK = "if TYPE_CHECKING:\n"


def declared(source: str) -> dict[str, tuple[str, str]]:
    """Name -> (module, relative as written, and the name there) of each `from ... import`
    in the source's `if TYPE_CHECKING:` block."""
    start = source.index(_BLOCK) + len(_BLOCK)
    lines = []
    for line in source[start:].splitlines():
        if line and not line[0].isspace():
            break
        lines.append(line)
    where: dict[str, tuple[str, str]] = {}
    for node in ast.parse(textwrap.dedent("\n".join(lines))).body:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                where[alias.asname or alias.name] = (module, alias.name)
    return where


def exports(package: str) -> Callable[[str], Any]:
    """The `__getattr__` of `package` (see the module's docstring)."""
    where: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> Any:
        module = sys.modules[package]
        if not where:
            with open(module.__file__ or "", encoding="utf-8") as fh:
                where.update(declared(fh.read()))
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(found[0], package), found[1])
        vars(module)[name] = value
        return value

    return __getattr__
