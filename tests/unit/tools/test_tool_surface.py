"""The public surface of `logician_kernel.tools`: exported names, the declared tools, argument
validation, describe(), the never-raise contract of run(), bound_output and the python tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest

import logician_kernel.tools as tools_pkg
from logician_kernel.tools import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    bound_output,
    default_tools,
)
from logician_kernel.types import ToolSpec


def test_exported_names_are_what_we_mean_to_export():
    assert sorted(tools_pkg.__all__) == sorted(
        [
            "NOTEBOOK_TOOLS",
            "NotebookAccess",
            "Recovery",
            "Tool",
            "ToolContext",
            "ToolError",
            "ToolResult",
            "bound_output",
            "default_tools",
            "resolve_path",
        ]
    )
    for name in tools_pkg.__all__:
        assert hasattr(tools_pkg, name)


EXPECTED = {
    "read": ("pure", True),
    "write": ("restorable", False),
    "edit": ("restorable", False),
    "bash": ("external", False),
    "python": ("external", False),
    "ls": ("pure", True),
    "glob": ("pure", True),
    "grep": ("pure", True),
    "notebook_read": ("pure", True),
    "notebook_edit": ("external", False),
}


def test_default_tools_declare_recovery_and_read_only():
    tools = default_tools()
    assert list(tools) == list(EXPECTED)
    for name, tool in tools.items():
        assert tool.name == name
        assert (tool.recovery, tool.read_only) == EXPECTED[name]


def test_specs_are_object_schemas_the_providers_can_send():
    for tool in default_tools().values():
        spec = tool.spec()
        assert isinstance(spec, ToolSpec)
        assert spec.name == tool.name and spec.description
        params = spec.parameters
        assert params["type"] == "object"
        assert set(params.get("required", [])) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["type"] in {"string", "integer", "boolean", "number"}
            assert prop["description"]
    assert default_tools() is not default_tools()  # fresh instances each time


def test_describe_is_a_readable_one_liner():
    tools = default_tools()
    assert tools["bash"].describe({"command": "ls -la"}) == "ls -la"
    assert tools["bash"].describe({"command": "cd src\nmake"}) == "cd src …"
    assert tools["write"].describe({"path": "a.txt", "content": "x" * 120}) == "write a.txt (120 B)"
    assert tools["python"].describe({"code": "import math\nmath.pi"}) == "import math …"
    assert tools["read"].describe({"path": "a.txt", "offset": 10, "limit": 5}) == (
        "read a.txt (lines 10-14)"
    )
    assert tools["edit"].describe({"path": "a.txt", "replace_all": True}).startswith("edit a.txt")
    assert tools["grep"].describe({"pattern": "def ", "path": "src"}) == "grep 'def ' in src"
    assert len(tools["bash"].describe({"command": "echo " + "x" * 1000})) <= 200
    for tool in tools.values():  # garbage never raises
        assert isinstance(tool.describe({"path": 3, "command": None, "code": []}), str)
        assert isinstance(tool.describe("not a dict"), str)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read", {}, "read: missing required argument 'path'"),
        ("read", {"path": 3}, "read: argument 'path' must be a string, got 3 (int)"),
        ("read", {"path": "a", "offset": 0}, "read: argument 'offset' must be at least 1"),
        ("read", {"path": "a", "limit": "10"}, "read: argument 'limit' must be an integer"),
        (
            "edit",
            {"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"},
            "edit: argument 'replace_all' must be true or false",
        ),
        ("write", {"path": "a", "content": "x", "mode": "w"}, "write: unknown argument 'mode'"),
        ("bash", {"command": None}, "bash: missing required argument 'command'"),
    ],
)
def test_invalid_arguments_name_the_argument(call, name, arguments, expected):
    result = call(name, **arguments)
    assert result.is_error
    assert result.content.startswith(expected), result.content


def test_integral_floats_are_accepted_as_integers(call, ws: Path):
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    result = call("read", path="a.txt", offset=2.0, limit=1.0)
    assert not result.is_error and result.content.startswith("     2\ttwo\n[showing lines 2-2 of 3")


def test_non_object_arguments_are_an_error(ctx):
    result = asyncio.run(default_tools()["ls"].run(["."], ctx))  # type: ignore[arg-type]
    assert result.is_error and "arguments must be a JSON object" in result.content


class _Broken(Tool):
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "fails"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    recovery = "pure"
    read_only = True

    def __init__(self, exc: BaseException | None = None, content: str = "") -> None:
        self.exc, self.content = exc, content

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self.exc is not None:
            raise self.exc
        return ToolResult(content=self.content)


def test_run_turns_failures_into_error_results(ctx):
    result = asyncio.run(_Broken(ToolError("broken: no luck")).run({}, ctx))
    assert result == ToolResult(content="broken: no luck", is_error=True, display="broken: no luck")
    result = asyncio.run(_Broken(RuntimeError("bug")).run({}, ctx))
    assert result.is_error and result.content == "broken: unexpected RuntimeError: bug"
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(_Broken(asyncio.CancelledError()).run({}, ctx))


def test_run_bounds_every_tools_content(ws: Path):
    small = ToolContext(workspace=ws, capture=lambda p: None, max_output_bytes=1000)
    result = asyncio.run(_Broken(content="x\n" * 10_000).run({}, small))
    assert len(result.content.encode()) <= 1000
    assert "output truncated" in result.content


def test_bound_output_keeps_text_that_fits():
    text = "héllo\n" * 10
    assert bound_output(text, len(text.encode())) is text


def test_bound_output_keeps_head_and_tail_and_says_what_was_cut():
    text = "".join(f"line {i}\n" for i in range(100_000))
    out = bound_output(text, 2000)
    assert len(out.encode()) <= 2000
    assert out.startswith("line 0\nline 1\n")
    assert out.endswith("line 99999\n")
    marker = next(line for line in out.splitlines() if line.startswith("[... output truncated"))
    kept = out.replace(marker + "\n", "")
    cut_bytes = len(text.encode()) - len(kept.encode())
    cut_lines = text.count("\n") - kept.count("\n")
    assert f"{cut_bytes:,} bytes ({cut_lines:,} lines) cut" in marker
    # whole lines on both sides of the marker
    head, tail = out.split(marker + "\n")
    assert head.endswith("\n") and tail.startswith("line ")


def test_bound_output_survives_multibyte_text_and_tiny_limits():
    out = bound_output("é" * 10_000, 1000)
    assert len(out.encode()) <= 1000 and "output truncated" in out
    assert "output truncated" in bound_output("x" * 100, 10)


def test_python_tool_needs_a_notebook_kernel(call):
    result = call("python", code="1 + 1")
    assert result.is_error and result.content == "python tool needs a notebook kernel"


def test_python_tool_delegates_to_the_kernel(ws: Path):
    seen: list[str] = []

    async def run_python(code: str) -> ToolResult:
        seen.append(code)
        return ToolResult(content="2", display="ok")

    ctx = ToolContext(workspace=ws, capture=lambda p: None, run_python=run_python)
    result = asyncio.run(default_tools()["python"].run({"code": "1 + 1"}, ctx))
    assert result == ToolResult(content="2", display="ok") and seen == ["1 + 1"]
    result = asyncio.run(default_tools()["python"].run({"code": "  "}, ctx))
    assert result.is_error and seen == ["1 + 1"]
