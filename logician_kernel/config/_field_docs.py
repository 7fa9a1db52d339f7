"""The configuration's field descriptions, read from the docstring under each field when they
are first asked for: `%logician config`'s help, `logician config schema` (and the shipped
`config.schema.json`), the example file.

pydantic's `use_attribute_docstrings` reads them as each model class is created, by walking
the importing frames and mapping every loaded module to its file (`inspect.getmodule`): most of
the configuration's import time at a kernel's start, for text a start never shows. Here each
module's source is parsed once, on first use, the descriptions are set as pydantic sets them
(the docstring under a field annotated in the class itself; an inherited field keeps its
parent's), and the models are rebuilt so that their JSON schema carries them.

Must never: run at import, or replace a description given with `Field(description=...)`.
"""

from __future__ import annotations

import ast
import inspect
import threading
from types import ModuleType
from typing import Any, get_args

from pydantic import BaseModel

_described = False
_lock = threading.Lock()


def describe_fields() -> None:
    """Give every configuration field its docstring as description (once per process)."""
    global _described
    if _described:
        return
    with _lock:
        if _described:
            return
        from . import _hooks_schema, _mcp_schema, _model_schema, _schema

        models: list[type[BaseModel]] = []
        for module in (_hooks_schema, _mcp_schema, _model_schema, _schema):
            models += _describe_module(module)
        done: set[type[BaseModel]] = set()
        for model in models:
            _rebuild(model, done)
        _described = True


def _describe_module(module: ModuleType) -> list[type[BaseModel]]:
    docs = _class_docs(ast.parse(inspect.getsource(module)))
    models = [
        cls
        for name in docs
        if isinstance(cls := getattr(module, name, None), type) and issubclass(cls, BaseModel)
    ]
    for cls in sorted(models, key=lambda c: len(c.__mro__)):  # parents first
        own = docs[cls.__name__]
        annotated = cls.__dict__.get("__annotations__", {})
        for name, info in cls.model_fields.items():
            if info.description is not None:
                continue
            if name in annotated:
                info.description = own.get(name)
            else:
                info.description = _inherited(cls, name)
    return models


def _inherited(cls: type[BaseModel], name: str) -> str | None:
    for base in cls.__mro__[1:]:
        if isinstance(base, type) and issubclass(base, BaseModel) and name in base.model_fields:
            return base.model_fields[name].description
    return None


def _class_docs(tree: ast.Module) -> dict[str, dict[str, str]]:
    """Per top-level class: the string statement right after each annotated name, cleaned as
    pydantic cleans it (`inspect.cleandoc`)."""
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        docs: dict[str, str] = {}
        target: str | None = None
        for stmt in node.body:
            if (
                target is not None
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                docs[target] = inspect.cleandoc(stmt.value.value)
            field = stmt.target if isinstance(stmt, ast.AnnAssign) else None
            target = field.id if isinstance(field, ast.Name) else None
        out[node.name] = docs
    return out


def _rebuild(model: type[BaseModel], done: set[type[BaseModel]]) -> None:
    """Rebuild `model`'s schema after those of the models its fields hold (a model's schema
    embeds theirs as built), so that every description is in it."""
    if model in done:
        return
    done.add(model)
    for info in model.model_fields.values():
        for inner in _models_in(info.annotation):
            _rebuild(inner, done)
    model.model_rebuild(force=True)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]
