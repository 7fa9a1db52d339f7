"""The agent cell's *Rewind this call* controls without a browser: which control each frontend
gets, the widget's preview-then-rewind, its `Rewound` state, and its being off while a cell
runs (widgets talk to ipywidgets' own dummy comm)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from ipywidgets import Widget
from ipywidgets.widgets.tests.utils import setup_test_comm, teardown_test_comm

from logician_kernel.jupyter import call_buttons
from logician_kernel.jupyter.call_buttons import BUSY, MIME, CallButtons, CallRewindButton
from logician_kernel.workspace import CallRow, RewindError


@pytest.fixture(autouse=True)
def _dummy_comm() -> Iterator[None]:
    setup_test_comm()
    yield
    Widget.close_all()
    teardown_test_comm()


def rows() -> list[CallRow]:
    return [
        CallRow("b1", "bash", "echo x > a.txt", files=["a.txt"], undoable=True),
        CallRow("w1", "write", "b.txt", files=["b.txt"], undoable=True),
        CallRow("r1", "read", "data.csv", why_not="it changed no file"),
    ]


class Frames:
    """The rewind source the controls call (`LedgerRewindSource`'s surface they use)."""

    def __init__(self, *, listening: bool = False) -> None:
        self.comms = SimpleNamespace(listening=listening)
        # frame 1: the agent cell (its calls changed files); frame 2: a plain cell's
        changes = {
            1: [SimpleNamespace(call_id="b1", by="tool"), SimpleNamespace(call_id="w1", by="tool")],
            2: [SimpleNamespace(call_id=None, by="cell")],
        }
        views = {n: SimpleNamespace(changes=c) for n, c in changes.items()}
        self.workspace = SimpleNamespace(
            calls=lambda frame: rows() if frame == 1 else [],
            checkpoints_if_on=SimpleNamespace(frames=lambda: views),
        )
        self.asked: list[str] = []
        self.refusal: str | None = None

    def rewind_call(self, call_id: str, force: bool) -> dict[str, Any]:
        self.asked.append(call_id)
        if self.refusal:
            raise RewindError(self.refusal)
        return {"headline": f"Rewound call {call_id}: 1 file(s) put back", "left": []}


WIDGETS = SimpleNamespace(
    comm_manager=SimpleNamespace(comms={"c": SimpleNamespace(target_name="jupyter.widget.control")})
)
PLAIN = SimpleNamespace(comm_manager=SimpleNamespace(comms={}))


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    out: list[Any] = []
    monkeypatch.setattr(call_buttons, "display", lambda obj, **kw: out.append(obj))
    return out


def test_where_widgets_render_each_changing_call_gets_a_button(shown: list[Any]) -> None:
    buttons = CallButtons(WIDGETS, Frames())  # type: ignore[arg-type]
    buttons.cell_ended(1)
    assert [c.row.call_id for c in shown] == ["b1", "w1"]  # the read changed nothing
    assert all(isinstance(c, CallRewindButton) for c in shown)
    assert "`%logician rewind --call b1`" in shown[0].plain_text()  # text/plain of the widget
    buttons.cell_ended(2)  # a plain cell: no call, no control
    assert len(shown) == 2


def test_with_the_lab_extension_or_no_widgets_the_control_is_data_and_a_hint(
    shown: list[Any],
) -> None:
    CallButtons(WIDGETS, Frames(listening=True)).cell_ended(1)  # type: ignore[arg-type]
    CallButtons(PLAIN, Frames()).cell_ended(1)  # type: ignore[arg-type]
    assert [b[MIME]["call_id"] for b in shown] == ["b1", "w1", "b1", "w1"]
    assert shown[0][MIME] == {
        "call_id": "b1",
        "frame": 1,
        "tool": "bash",
        "words": "echo x > a.txt",
        "files": ["a.txt"],
    }
    assert shown[0]["text/plain"].endswith("`%logician rewind --call b1` puts it back")


def test_the_button_is_off_while_a_cell_runs_and_on_again_after(shown: list[Any]) -> None:
    buttons = CallButtons(WIDGETS, Frames())  # type: ignore[arg-type]
    buttons.cell_ended(1)
    control = shown[0]
    buttons.cell_started()
    assert control.button.disabled and control.button.tooltip == BUSY
    buttons.cell_ended(None)
    assert not control.button.disabled and "a.txt" in control.button.tooltip


def test_the_first_click_previews_the_second_rewinds_and_it_then_says_rewound() -> None:
    frames = Frames()
    control = CallRewindButton(rows()[0], frames)  # type: ignore[arg-type]
    control.click()
    assert frames.asked == [] and "Puts back the 1 file(s)" in control.result.value
    assert "a.txt" in control.result.value and control.button.description.startswith("Confirm")
    control.click()
    assert frames.asked == ["b1"] and "Rewound call b1" in control.result.value
    assert control.button.description == "Rewound" and control.button.disabled
    control.click()
    control.busy(False)  # a cell's end does not turn a rewound call's button on
    assert frames.asked == ["b1"] and control.button.disabled


def test_a_refusal_is_said_in_place_and_an_already_rewound_call_says_rewound() -> None:
    frames = Frames()
    frames.refusal = "a cell is running; rewind the call when it has finished"
    control = CallRewindButton(rows()[0], frames)  # type: ignore[arg-type]
    control.click()
    control.click()
    assert "a cell is running" in control.result.value and not control.button.disabled
    frames.refusal = "rewind --call: call b1 was already rewound at 2026-12-04T10:00:00"
    control.click()
    assert control.button.description == "Rewound" and control.button.disabled
