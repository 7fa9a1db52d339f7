"""RewindControl without a browser: widgets talk to ipywidgets' own dummy comm."""

from __future__ import annotations

import pytest
from ipywidgets import Widget

pytest.importorskip("ipywidgets")

from ipywidgets.widgets.tests.utils import setup_test_comm, teardown_test_comm  # noqa: E402

from logician_kernel.jupyter.widgets import (  # noqa: E402
    REWIND_MODES,
    FrameRow,
    RewindControl,
    RewindPreview,
)
from logician_kernel.jupyter.widgets.rewind import MAX_FRAMES_SHOWN  # noqa: E402


@pytest.fixture(autouse=True)
def _dummy_comm():
    setup_test_comm()
    yield
    # Close what the test made while the dummy comm is still there, not at interpreter exit.
    Widget.close_all()
    teardown_test_comm()


def row(frame: int) -> FrameRow:
    return FrameRow(
        frame=frame,
        cell=f"In [{frame}]",
        time=f"12:{frame % 60:02d}",
        label=f"prompt {frame}",
        outcome="completed",
        files="2 created, 1 modified",
        tokens="1.2k",
    )


class FakeSource:
    def __init__(self, n: int = 3) -> None:
        self.frames = list(range(1, n + 1))  # oldest first, as a store would keep them
        self.calls: list[tuple[int, str]] = []
        self.previews: list[int] = []
        self.options: list[tuple[bool, bool]] = []  # (include_external, force) of each call
        self.kept: list[bool] = []  # keep_uncertain of each call
        self.rows_calls = 0
        self.fail = ""

    def rows(self) -> list[FrameRow]:
        self.rows_calls += 1
        return [row(f) for f in self.frames]

    def preview(
        self,
        frame: int,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> RewindPreview:
        self.previews.append(frame)
        self.options.append((include_external, force))
        self.kept.append(keep_uncertain)
        return RewindPreview(
            files=["restore data.csv", "delete <out>.txt"],
            conflicts=["data.csv changed since"] if frame == 2 else [],
            messages_dropped=frame,
        )

    def rewind(
        self,
        frame: int,
        mode: str,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> str:
        self.calls.append((frame, mode))
        self.options.append((include_external, force))
        self.kept.append(keep_uncertain)
        if self.fail:
            raise ValueError(self.fail)
        self.frames = [f for f in self.frames if f < frame]
        return f"Rewound to frame {frame} ({mode})"

    def undo(self) -> str:
        if self.fail:
            raise ValueError(self.fail)
        self.frames = list(range(1, 4))
        return "Undid the rewind"

    def resume(self) -> str:
        self.pending = ""
        return "Resumed the interrupted rewind"

    pending = ""

    def interrupted(self) -> str:
        return self.pending


def buttons_disabled(control: RewindControl) -> bool:
    return all(b.disabled for b in control.buttons.values())


def test_lists_frames_newest_first() -> None:
    control = RewindControl(FakeSource(3))
    assert [v for _, v in control.frames.options] == [3, 2, 1]
    label = control.frames.options[0][0]
    assert "#3" in label and "In [3]" in label and "prompt 3" in label
    assert "2 created, 1 modified" in label and "completed" in label and "1.2k" in label
    assert control.more.value == ""


def test_list_is_bounded_to_newest() -> None:
    control = RewindControl(FakeSource(MAX_FRAMES_SHOWN + 50))
    values = [v for _, v in control.frames.options]
    assert len(values) == MAX_FRAMES_SHOWN
    assert values[0] == MAX_FRAMES_SHOWN + 50 and values[-1] == 51
    assert "50 older frames" in control.more.value


def test_no_selection_disables_buttons() -> None:
    source = FakeSource(3)
    control = RewindControl(source)
    assert control.selected_frame is None and buttons_disabled(control)
    assert "Select a frame" in control.preview.value
    control.rewind("both")  # no selection: nothing happens
    assert source.calls == []
    assert RewindControl(FakeSource(0)).frames.options == ()


def test_selecting_shows_preview_with_conflicts() -> None:
    control = RewindControl(FakeSource(3))
    control.frames.value = 2
    assert control.selected_frame == 2 and not buttons_disabled(control)
    out = control.preview.value
    assert "restore data.csv" in out and "&lt;out&gt;" in out and "<out>" not in out
    assert (
        "lk-rewind-conflict" in out
        and "--jp-error-color0" in out
        and "data.csv changed since" in out
    )
    assert "2 conversation messages dropped" in out
    control.frames.value = 1
    assert "lk-rewind-conflict" not in control.preview.value
    assert "1 conversation message dropped" in control.preview.value


@pytest.mark.parametrize(
    ("mode", "description"),
    [
        ("both", "Rewind files, variables and conversation"),
        ("files", "Files only"),
        ("conversation", "Conversation only"),
        ("variables", "Variables only"),
    ],
)
def test_each_button_rewinds_with_its_mode_and_refreshes(mode: str, description: str) -> None:
    source = FakeSource(3)
    control = RewindControl(source)
    control.frames.value = 2
    before = source.rows_calls
    button = control.buttons[mode]  # type: ignore[index]
    assert button.description == description
    button.click()
    assert source.calls == [(2, mode)]
    assert source.rows_calls == before + 1
    assert control.status == f"Rewound to frame 2 ({mode})" and control.status_kind == "ok"
    assert f"Rewound to frame 2 ({mode})" in control.result.value
    # Frame 2 is gone after the rewind: the selection is cleared and the buttons disabled.
    assert [v for _, v in control.frames.options] == [1]
    assert control.selected_frame is None and buttons_disabled(control)
    assert tuple(control.buttons) == REWIND_MODES


def test_the_two_options_reach_the_preview_and_the_rewind() -> None:
    """Off by default: changes made outside this kernel and conflicts are left alone; each box,
    once ticked, re-previews with it and the rewind carries it."""
    source = FakeSource(3)
    control = RewindControl(source)
    control.frames.value = 2
    assert source.options[-1] == (False, False)
    assert "left alone unless" in control.preview.value
    control.include_external.value = True
    assert source.options[-1] == (True, False) and source.previews[-1] == 2
    control.force.value = True
    assert source.options[-1] == (True, True)
    control.buttons["files"].click()
    assert source.calls[-1] == (2, "files") and source.options[-1] == (True, True)
    assert "--include-external" in control.plain_text()


def test_the_keep_uncertain_box_reaches_the_preview_and_the_rewind() -> None:
    """Off by default (uncertain changes are reverted); ticked, files whose writer is uncertain
    are left alone in the preview and the rewind alike."""
    source = FakeSource(3)
    control = RewindControl(source)
    control.frames.value = 2
    assert source.kept[-1] is False
    control.keep_uncertain.value = True
    assert source.kept[-1] is True and source.previews[-1] == 2
    control.buttons["files"].click()
    assert source.calls[-1] == (2, "files") and source.kept[-1] is True
    assert "--keep-uncertain" in control.plain_text()


def test_errors_are_shown() -> None:
    source = FakeSource(3)
    source.fail = "frame 3 has <conflicts>"
    control = RewindControl(source)
    control.frames.value = 3
    control.buttons["files"].click()
    assert source.calls == [(3, "files")]
    assert control.status_kind == "error" and control.status == "frame 3 has <conflicts>"
    assert "Rewind failed: frame 3 has &lt;conflicts&gt;" in control.result.value
    assert "--jp-error-color0" in control.result.value
    assert control.selected_frame == 3  # refreshed; the frame still exists


def test_preview_error_is_shown() -> None:
    source = FakeSource(2)
    source.preview = lambda frame, **_options: RewindPreview(error="no snapshot <x>")  # type: ignore[method-assign]
    control = RewindControl(source)
    control.frames.value = 1
    assert "no snapshot &lt;x&gt;" in control.preview.value


def test_refresh_keeps_selection() -> None:
    source = FakeSource(3)
    control = RewindControl(source)
    control.frames.value = 2
    source.frames.append(4)
    control.refresh()
    assert [v for _, v in control.frames.options] == [4, 3, 2, 1]
    assert control.frames.value == 2 and control.selected_frame == 2
    assert not buttons_disabled(control)
    source.frames.remove(2)
    control.refresh()
    assert control.frames.value is None and buttons_disabled(control)


def test_ten_thousand_rows_refresh_to_a_bounded_page() -> None:
    # how fast is a benchmark's question; here: a refresh lists a bounded page, not 10,000 rows
    source = FakeSource(10_000)
    control = RewindControl(source)
    control.frames.value = 9_990
    frames, preview, buttons = control.frames, control.preview, dict(control.buttons)
    for _ in range(5):
        control.refresh()
    assert len(control.frames.options) == MAX_FRAMES_SHOWN
    assert control.frames.options[0][1] == 10_000
    assert control.selected_frame == 9_990
    # Only the options were rebuilt; the controls themselves are the same objects.
    assert control.frames is frames and control.preview is preview and control.buttons == buttons


def test_text_plain_lists_the_newest_frames_and_the_magics_that_rewind() -> None:
    control = RewindControl(FakeSource(25))
    lines = control.plain_text().splitlines()
    assert lines[0] == "Rewind: 25 frame(s), newest first"
    assert lines[1].startswith("  #25 · In [25] · ") and "prompt 25" in lines[1]
    assert "  … 15 more" in lines
    assert lines[-1].startswith("Without widgets: %logician rewind N")
    assert RewindControl(FakeSource(0)).plain_text().startswith("Rewind: no frames yet")


def test_the_preview_lists_the_variables_by_name_escaped() -> None:
    from logician_kernel.jupyter.widgets.rewind import preview_html

    html = preview_html(RewindPreview(variables=["restore df (as In [3] left it)", "delete <t>"]))
    assert "<b>Variables</b>" in html and "restore df (as In [3] left it)" in html
    assert "delete &lt;t&gt;" in html
    assert "Variables" not in preview_html(RewindPreview())


def test_undo_rewind_button_brings_the_frames_back_and_says_so() -> None:
    source = FakeSource()
    control = RewindControl(source)
    control.frames.value = 2
    control.buttons["both"].click()
    assert [v for _l, v in control.frames.options] == [1]
    control.undo_button.click()
    assert control.status == "Undid the rewind" and control.status_kind == "ok"
    assert [v for _l, v in control.frames.options] == [3, 2, 1]
    source.fail = "undo: the last rewind (frame(s) 2, ledger entry 9) was already undone"
    control.undo_button.click()
    assert (
        control.status_kind == "error"
        and "Undo failed: undo: the last rewind" in control.result.value
    )


def test_resume_button_shows_only_while_a_rewind_is_interrupted() -> None:
    source = FakeSource()
    source.pending = "Logician: a rewind of frame(s) 2 was interrupted"
    control = RewindControl(source)
    assert control.resume_button.layout.display == ""
    assert "was interrupted" in control.result.value
    control.resume_button.click()
    assert control.status == "Resumed the interrupted rewind"
    assert control.resume_button.layout.display == "none"
