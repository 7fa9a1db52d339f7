"""A rewind's scope is one typed value from the request to the record to the report: the
report says what a files-only rewind kept because the record says so, not because its note
happens to contain `--files-only`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from logician_kernel.jupyter import display, variables_view
from logician_kernel.workspace import RewindScope, Workspace


def test_a_scope_names_its_parts_and_refuses_nothing_or_an_unknown_mode() -> None:
    assert RewindScope() == RewindScope(files=True, conversation=True, variables=True)
    assert RewindScope.from_mode("both") == RewindScope()
    assert RewindScope.from_mode("files") == RewindScope.only("files")
    assert RewindScope.only("variables").single == "variables"
    assert RewindScope().single is None
    with pytest.raises(ValueError, match="mode: 'everything' is not a rewind scope"):
        RewindScope.from_mode("everything")
    with pytest.raises(ValidationError, match="at least one of files, conversation, variables"):
        RewindScope(files=False, conversation=False, variables=False)


def _workspace(tmp_path: Path) -> Workspace:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "scope", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    return Workspace.open(ws, env)


def test_the_scope_travels_typed_to_the_record_and_the_report(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    try:
        namespace: dict[str, object] = {}
        workspace.bind_namespace(namespace)
        with workspace.frame(1, None, "x = 1") as frame:
            (workspace.root / "f.txt").write_text("one")
            namespace["x"] = 1
        assert frame.closed is not None
        item = workspace.rewind(frame.closed.frame, RewindScope.only("files"))
        assert item.scope == RewindScope.only("files")
        assert not (workspace.root / "f.txt").exists() and namespace == {"x": 1}
        silent = item.model_copy(update={"note": ""})  # the note is for people only
        assert "(conversation kept)" in display.rewind_result(silent).text

        with workspace.frame(2, None, "x = 2") as frame:
            namespace["x"] = 2
        assert frame.closed is not None
        item = workspace.rewind(frame.closed.frame, RewindScope.only("variables"))
        assert item.scope == RewindScope.only("variables") and namespace == {"x": 1}
        report = variables_view.rewind_result(item.model_copy(update={"note": ""})).text
        assert report.startswith("Rewound the variables")
    finally:
        workspace.close()


def test_a_frame_id_reaches_the_frame_stack_as_a_number(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    try:
        with workspace.frame(1, "cell-a", "pass") as frame:
            (workspace.root / "g.txt").write_text("g")
        assert frame.closed is not None
        assert workspace.target(frame.closed.frame) == frame.closed.frame
        assert workspace.target(None, "cell-a") == frame.closed.frame
        assert workspace.preview(frame.closed.frame).frame == frame.closed.frame
    finally:
        workspace.close()
