"""The notices sink: where `ui.notices` sends a notice, what it keeps, what counts as read."""

from __future__ import annotations

import io
import logging

from logician_kernel.workspace import Notice, NoticeBoard, NoticeMode


def board(mode: NoticeMode) -> tuple[NoticeBoard, list[Notice], list[str]]:
    b = NoticeBoard(lambda: mode)
    log = logging.getLogger(f"test-notices-{mode}")
    log.setLevel(logging.INFO)  # notices go to the kernel log at INFO: stderr stays ipykernel's
    logged: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            assert record.levelno == logging.INFO, record.levelname
            logged.append(record.getMessage())

    log.addHandler(Keep())
    b.attach(log)
    told: list[Notice] = []
    b.listeners.append(told.append)
    return b, told, logged


def test_sidebar_keeps_the_cell_clean_and_tells_the_listener() -> None:
    b, told, logged = board("sidebar")
    out = io.StringIO()
    b.cell(3, 5, "c5")
    b.say("Logician: frame 3: 1 variable(s) not captured", out)
    b.say("Logician: said for the next cell")
    b.flush(out)
    assert out.getvalue() == ""
    assert [n.text for n in told] == [n.text for n in b.all()]
    assert told[0].where == "frame 3, cell [5]" and told[0].cell_id == "c5"
    assert any("not captured (frame 3, cell [5])" in line for line in logged)


def test_cell_prints_in_the_cell_and_off_shows_nowhere() -> None:
    b, told, _ = board("cell")
    out = io.StringIO()
    b.say("Logician: now", out)
    b.say("Logician: later")
    assert out.getvalue() == "Logician: now\n"
    b.flush(out)
    assert out.getvalue() == "Logician: now\nLogician: later\n" and told == []

    off, told, logged = board("off")
    off.say("Logician: quiet", out)
    off.flush(out)
    assert out.getvalue().count("quiet") == 0 and told == [] and logged
    assert [n.text for n in off.unread()] == ["Logician: quiet"]


def test_reading_counts_and_critical_notices() -> None:
    b, _, _ = board("sidebar")
    reads: list[int] = []
    b.read_listeners.append(lambda: reads.append(b.unread_count()))
    first = b.say("Logician: frames are off for this session: the disk is full.")
    b.say("Logician: frame 2: 1 changed path(s) not captured")
    assert first.critical and not b.all()[1].critical and b.unread_count() == 2
    assert b.mark_read(first.id) == 1 and reads == [1]
    assert b.mark_read(first.id) == 0 and reads == [1]  # nothing new: nobody told
    b.mark_read()
    assert b.unread_count() == 0 and len(b.all()) == 2


def test_a_notebookless_board_prints_and_a_kernel_drops_what_it_will_not_print() -> None:
    b = NoticeBoard(lambda: "sidebar")  # a script: no notebook, printed as said
    b.say("Logician: at the start")
    out = io.StringIO()
    b.flush(out)
    assert out.getvalue() == "Logician: at the start\n"
    k = NoticeBoard(lambda: "sidebar")
    k.say("Logician: said before the kernel attached")
    k.attach(logging.getLogger("test-notices-attach"))
    k.flush(out)
    assert out.getvalue() == "Logician: at the start\n" and k.unread_count() == 1


def test_without_a_sidebar_sidebar_means_the_cell() -> None:
    b = NoticeBoard(lambda: "sidebar")  # `%load_ext` in a stock kernel
    b.attach(logging.getLogger("test-notices-load-ext"), sidebar=False)
    out = io.StringIO()
    b.say("Logician: frame 1: 1 variable(s) not captured", out)
    assert out.getvalue() == "Logician: frame 1: 1 variable(s) not captured\n"
    quiet = NoticeBoard(lambda: "off")
    quiet.attach(logging.getLogger("test-notices-load-ext-off"), sidebar=False)
    quiet.say("Logician: hidden", out)
    assert "hidden" not in out.getvalue()
