"""How the answer reaches the frontend: Markdown re-rendered in place, or stdout text once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from logician_kernel.jupyter.answer import (
    StdoutAnswer,
    answer_output,
    is_terminal,
    markdown_answer,
)
from logician_kernel.jupyter.display import answer_bundle


def kernel_with(*targets: str) -> SimpleNamespace:
    comms = {str(i): SimpleNamespace(target_name=t) for i, t in enumerate(targets)}
    return SimpleNamespace(comm_manager=SimpleNamespace(comms=comms))


def test_the_answer_bundle_is_rendered_html_and_the_text_itself() -> None:
    # no text/markdown: a frontend that trusts the output would run the HTML in the model's
    # Markdown (issue 27); the kernel renders it inert instead (tests/security/...inert_output)
    bundle = answer_bundle("**done**")
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/plain"] == "**done**"
    assert "<strong>done</strong>" in bundle["text/html"]


def test_stdout_prints_each_piece_once_and_ends_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show = StdoutAnswer()
    handle = None
    for text in ("The ", "The answer ", "The answer ", "The answer is 42."):
        handle = show(text, handle)
    show.end(handle)
    show.end(show("Already ended\n", None))
    assert capsys.readouterr().out == "The answer is 42.\nAlready ended\n"


@pytest.mark.parametrize(
    ("targets", "stdin", "sidebar", "terminal"),
    [
        ((), True, False, True),  # jupyter console
        (("jupyter.widget.control",), True, False, False),  # JupyterLab with widgets
        ((), True, True, False),  # the lab extension's sidebar is listening
        ((), False, False, False),  # nbclient, papermill, logician run
    ],
)
def test_a_terminal_is_a_frontend_that_reads_stdin_and_draws_nothing(
    targets: tuple[str, ...], stdin: bool, sidebar: bool, terminal: bool
) -> None:
    kernel = kernel_with(*targets)
    assert is_terminal(kernel, can_read_stdin=stdin, sidebar=sidebar) is terminal


def test_ui_answer_overrides_the_guess() -> None:
    assert isinstance(answer_output("auto", terminal=True), StdoutAnswer)
    assert answer_output("auto", terminal=False) is markdown_answer
    assert isinstance(answer_output("stream", terminal=False), StdoutAnswer)
    assert answer_output("markdown", terminal=True) is markdown_answer


def test_a_slow_render_stretches_the_gap_before_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer is rendered in the kernel: a long one must not take the kernel's whole time."""
    from logician_kernel.events.events import ModelStreamed
    from logician_kernel.jupyter import agent_run
    from logician_kernel.types import TextDelta

    clock = [100.0]
    monkeypatch.setattr(agent_run.time, "monotonic", lambda: clock[0])
    shown: list[str] = []

    def slow_show(text: str, handle: object) -> str:
        clock[0] += 0.5  # this render took half a second
        shown.append(text)
        return "handle"

    view = agent_run.RunView(hz=10, show=slow_show)
    view.handle(ModelStreamed(event=TextDelta(text="a")))
    assert shown == ["a"]
    clock[0] += 0.6  # past 1/hz, but not past 3 x the last render's 0.5 s
    view.handle(ModelStreamed(event=TextDelta(text="b")))
    assert shown == ["a"]
    clock[0] += 1.0
    view.handle(ModelStreamed(event=TextDelta(text="c")))
    assert shown == ["a", "abc"]
    view.end_text()  # the end of the block always shows the whole answer
    assert shown == ["a", "abc"]  # nothing new since
