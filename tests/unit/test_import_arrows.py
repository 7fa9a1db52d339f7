"""Arrows point down only: every import between our packages, read from the source (ast), is
one the table below allows. `jupyter/` reaches everything durable through `workspace/`'s
surface; `providers/`, `policy/` and `loop/` may use `durable/` and `types/` of the durable
layers, never `ledger/`, `frames/` or `snapshots/`; nothing below `workspace/` imports `tools/`,
a run or a UI; `_lazy` (a package's names imported on first use) is below them all. Lazy
imports inside functions and `TYPE_CHECKING` imports count the same."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import logician_kernel.workspace as workspace

PACKAGE = Path(__file__).parents[2] / "logician_kernel"

# What each package (or top-level module) may import of ours, besides itself.
DURABLE_LAYERS = {"durable", "ledger", "snapshots", "frames"}
ALLOWED: dict[str, set[str]] = {
    "_lazy": set(),
    "types": {"_lazy"},
    "_version": set(),
    "durable": {"types"},
    "config": {"durable", "types", "_lazy"},
    "ledger": {"durable", "types", "_version", "_lazy"},
    "snapshots": {"durable", "types"},
    "frames": {"snapshots", "ledger", "durable", "types", "_lazy"},
    "workspace": {
        "frames",
        "snapshots",
        "ledger",
        "durable",
        "config",
        "types",
        "_version",
        "_lazy",
    },
    "events": {"types"},
    "compaction": {"types"},
    "providers": {"durable", "types", "_lazy"},
    "tools": {"config", "durable", "types", "_lazy"},
    "policy": {"providers", "tools", "durable", "types", "_lazy"},
    "mcp": {"tools", "config", "durable", "types"},
    "loop": {"compaction", "events", "policy", "providers", "tools", "config", "durable", "types"},
    "agent": {
        "workspace",
        "loop",
        "mcp",
        "compaction",
        "events",
        "policy",
        "providers",
        "tools",
        "frames",
        "ledger",
        "config",
        "durable",
        "types",
    },
    "jupyter": {"agent", "workspace", "config", "types", "_version", "_lazy"},
    "examples": set(),
    "cli": {"jupyter", "workspace", "ledger", "snapshots", "config", "_version"},
    "__main__": {"jupyter"},
    "__init__": {"agent", "jupyter", "_version"},
}

# Top-level modules any floor may use, not packages of the architecture document's table.
HELPERS = {"_version", "_lazy"}

# Imports the table does not allow yet, each with why it stays for now. A pair that is gone must
# leave this list too (the last test says so).
KNOWN: dict[tuple[str, str], str] = {}


def owner(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) of every import of ours in `path`."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    here = list(rel.parts[:-1])  # the package a relative import starts from
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "logician_kernel":
                    yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "logician_kernel":
                continue
            names = [alias.name for alias in node.names]
            # `from .. import ledger` imports the package `ledger`
            if module == "logician_kernel":
                for name in names:
                    yield node.lineno, f"logician_kernel.{name}", []
            else:
                yield node.lineno, module, names


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def target_package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_import_follows_the_arrows() -> None:
    wrong = []
    for path in modules():
        source = owner(path)
        assert source in ALLOWED, f"{path.relative_to(PACKAGE)}: a new package; add it to ALLOWED"
        rel = str(path.relative_to(PACKAGE))
        lines = path.read_text().splitlines()
        for lineno, module, _ in imports(path):
            target = target_package(module)
            if target == source or target in ALLOWED[source] or (rel, target) in KNOWN:
                continue
            wrong.append(
                f"logician_kernel/{rel}:{lineno}: `{lines[lineno - 1].strip()}` - {source}/ may "
                f"import only {', '.join(sorted(ALLOWED[source])) or 'nothing of ours'}"
            )
    assert not wrong, "imports against the arrows:\n" + "\n".join(wrong)


def test_jupyter_reaches_the_durable_layers_only_through_the_workspace_surface() -> None:
    wrong = []
    for path in sorted((PACKAGE / "jupyter").rglob("*.py")):
        rel = f"logician_kernel/{path.relative_to(PACKAGE)}"
        for lineno, module, names in imports(path):
            target = target_package(module)
            if target == "workspace":
                outside = [n for n in names if n not in workspace.__all__]
                if module != "logician_kernel.workspace" or outside or not names:
                    wrong.append(
                        f"{rel}:{lineno}: imports {module} {outside or names}; "
                        "use `from ..workspace import ...` (names in its __all__)"
                    )
            elif target == "config" and any(p.startswith("_") for p in module.split(".")):
                wrong.append(f"{rel}:{lineno}: imports the private {module}; use config's surface")
            elif target in DURABLE_LAYERS:
                wrong.append(f"{rel}:{lineno}: imports {module}; go through workspace/")
    assert not wrong, "\n".join(wrong)


def test_the_table_points_down_only() -> None:
    """No cycle in the table: each package can be given a floor below all it imports."""
    floor: dict[str, int] = {}

    def level(name: str, seen: tuple[str, ...] = ()) -> int:
        assert name not in seen, "cycle: " + " -> ".join((*seen, name))
        if name not in floor:
            floor[name] = 1 + max((level(d, (*seen, name)) for d in ALLOWED[name]), default=0)
        return floor[name]

    for name in ALLOWED:
        level(name)
    assert floor["durable"] < floor["ledger"] < floor["frames"] < floor["workspace"]
    assert floor["workspace"] < floor["agent"] < floor["jupyter"]
    for low in DURABLE_LAYERS | {"workspace"}:
        assert not ALLOWED[low] & {"tools", "agent", "jupyter", "loop", "policy", "providers"}
    for pkg in ("providers", "policy", "loop"):
        assert not ALLOWED[pkg] & {"ledger", "frames", "snapshots", "workspace"}


def test_every_known_exception_is_still_needed() -> None:
    used = {
        (str(path.relative_to(PACKAGE)), target_package(module))
        for path in modules()
        for _, module, _ in imports(path)
    }
    stale = sorted(pair for pair in KNOWN if pair not in used)
    assert not stale, f"no longer imported, remove from KNOWN: {stale}"


def test_the_architecture_document_shows_this_table() -> None:
    doc = (PACKAGE.parent / "docs/architecture.md").read_text()
    table = doc.split("| package | owns | may import |\n", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)/` \| .* \| (.*) \|$", table, re.M)
    shown = {pkg: set(re.findall(r"`(\w+)/`", may)) for pkg, may in rows}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert set(shown) == packages - {"examples"}
    for pkg, may in shown.items():
        assert may == ALLOWED[pkg] - HELPERS, f"docs/architecture.md, row {pkg}/"


def test_the_architecture_document_shows_each_package_on_its_floor() -> None:
    """Its floor: one above the highest floor it imports (the vocabulary is floor 1)."""
    floor: dict[str, int] = {}

    def level(name: str) -> int:
        if name not in floor:
            floor[name] = 1 + max((level(d) for d in ALLOWED[name] - HELPERS), default=0)
        return floor[name]

    doc = (PACKAGE.parent / "docs/architecture.md").read_text()
    shown = {
        name: int(number)
        for number, rest in re.findall(r"^floor (\d+) (.*)$", doc, re.M)
        for name in re.findall(r"\b(\w+)/", rest)
    }
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert set(shown) == packages - {"examples"}
    assert shown == {name: level(name) for name in shown}
