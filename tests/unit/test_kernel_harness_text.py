"""The kernel tests' reading of a cell's output (`tests/kernel_harness.CellResult.text`): what a
user reads, however the kernel cut its streams into messages."""

from __future__ import annotations

from kernel_harness import CellResult


def stream(name: str, text: str) -> dict:
    return {"msg_type": "stream", "content": {"name": name, "text": text}}


def test_a_print_cut_between_its_text_and_its_newline_reads_as_one_line() -> None:
    # at load, ipykernel's output thread may flush between `print`'s two writes
    cut = CellResult(
        {"status": "error"}, [stream("stderr", "UsageError: bad"), stream("stderr", "\n")]
    )
    whole = CellResult({"status": "error"}, [stream("stderr", "UsageError: bad\n")])
    assert cut.text == whole.text == "UsageError: bad\n"


def test_outputs_of_different_kinds_stay_lines_of_their_own() -> None:
    result = CellResult(
        {"status": "ok"},
        [
            stream("stdout", "out"),
            stream("stderr", "err"),
            {"msg_type": "display_data", "content": {"data": {"text/plain": "shown"}}},
            stream("stdout", "again"),
        ],
    )
    assert result.text == "out\nerr\nshown\nagain"
