"""The packages whose names load on first use (`logician_kernel/_lazy.py`): each name of
`__all__` is one the package's `TYPE_CHECKING` block imports (what mypy checks is what runs),
resolves to that module's object, and a name the package does not export is an
AttributeError naming it, as for any module."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from logician_kernel._lazy import declared

LAZY = (
    "types",
    "ledger",
    "frames",
    "config",
    "workspace",
    "tools",
    "policy",
    "providers",
    "jupyter/widgets",
)
PACKAGE = Path(__file__).parents[2] / "logician_kernel"


@pytest.mark.parametrize("name", LAZY)
def test_every_exported_name_is_declared_and_resolves(name: str) -> None:
    package = importlib.import_module(f"logician_kernel.{name.replace('/', '.')}")
    where = declared((PACKAGE / name / "__init__.py").read_text())
    exported = set(package.__all__) - {n for n in package.__all__ if n in vars(package)}
    assert exported <= set(where), sorted(exported - set(where))
    for export in package.__all__:
        value = getattr(package, export)
        assert not isinstance(value, ModuleType), f"{export}: the module, not its object"
        if export in where:
            module, original = where[export]
            source = importlib.import_module(module, package.__name__)
            assert value is getattr(source, original), export
    with pytest.raises(AttributeError, match=f"{package.__name__}.*no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_fresh_interpreter_imports_only_what_it_asks_for() -> None:
    """`from logician_kernel.ledger import ThreadLedger` loads the ledger, not its repair."""
    code = (
        "import sys; from logician_kernel.ledger import ThreadLedger; "
        "print(sorted(m for m in sys.modules if m in "
        "('logician_kernel.ledger.repair', 'logician_kernel.types.messages', 'tomlkit')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE.parent
    ).stdout
    assert out.strip() == "[]", out


def test_the_comm_handler_imports_nothing_of_a_run() -> None:
    """What answers a frontend before the agent loads (`jupyter/frontend_link.py`: the comm,
    its messages, the rewind dialog's source, the model picker) loads no run: not httpx, the
    provider clients, the loop, the session, MCP or the run status widget; nor ipywidgets (the
    rewind dialog's rows are plain values, `widgets/rewind_rows.py`)."""
    run = (
        "httpx",
        "ipywidgets",
        "mcp",
        "logician_kernel.providers._http",
        "logician_kernel.loop",
        "logician_kernel.agent.session",
        "logician_kernel.mcp",
        "logician_kernel.policy.run_budget",
        "logician_kernel.jupyter.widgets.status",
    )
    code = (
        "import sys; import logician_kernel.jupyter.frontend_link; "
        f"print(sorted(m for m in sys.modules if m in {run!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE.parent
    ).stdout
    assert out.strip() == "[]", out


def test_the_declaration_is_read_from_the_type_checking_block() -> None:
    source = (
        '"""Doc."""\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n'
        "    from .a import X\n    from ..b import (\n        Y,\n        Z as W,\n    )\n\n"
        "from .c import NotLazy\n"
    )
    assert declared(source) == {"X": (".a", "X"), "Y": ("..b", "Y"), "W": ("..b", "Z")}
