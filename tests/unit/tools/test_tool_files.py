"""`read`, `write`, `edit`: happy paths, clear errors, and capture before every write."""

from __future__ import annotations

from pathlib import Path

from logician_kernel.tools import ToolContext


def test_read_numbers_lines_like_cat_n(call, ws: Path):
    (ws / "a.txt").write_text("alpha\nbeta\r\ngamma")
    result = call("read", path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert result.display == "read a.txt (lines 1-3 of 3)"


def test_read_offset_and_limit_say_how_to_continue(call, ws: Path):
    (ws / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 101)))
    result = call("read", path="a.txt", offset=10, limit=3)
    lines = result.content.splitlines()
    assert lines[:3] == ["    10\tl10", "    11\tl11", "    12\tl12"]
    assert lines[3] == "[showing lines 10-12 of 100; call read with offset=13 to continue]"
    tail = call("read", path="a.txt", offset=99)
    assert tail.content == "    99\tl99\n   100\tl100"


def test_read_stops_at_the_output_bound_and_says_where(call, ws: Path):
    (ws / "big.txt").write_text("".join(f"{'x' * 50} {i}\n" for i in range(5000)))
    small = ToolContext(workspace=ws, capture=lambda p: None, max_output_bytes=2000)
    result = call("read", small, path="big.txt")
    assert len(result.content.encode()) <= 2000
    footer = result.content.splitlines()[-1]
    assert "output bound" in footer and "call read with offset=" in footer
    next_offset = int(footer.split("offset=")[1].split()[0])
    assert result.content.splitlines()[-2].startswith(f"{next_offset - 1:>6}\t")


def test_read_truncates_very_long_lines(call, ws: Path):
    (ws / "min.js").write_text("a" * 200_000 + "\nend\n")
    result = call("read", path="min.js")
    first, second = result.content.splitlines()[:2]
    assert "line truncated; it has 200,001 bytes" in first and len(first) < 2100
    assert second == "     2\tend"


def test_read_errors_are_clear(call, ws: Path):
    (ws / "a.txt").write_text("one\n")
    (ws / "d").mkdir()
    (ws / "empty.txt").write_text("")
    (ws / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    assert call("read", path="missing.txt").content == "read: no such file: missing.txt"
    assert call("read", path="d").content == "read: d is a directory; use ls to list it"
    past = call("read", path="a.txt", offset=5)
    assert past.is_error and past.content == (
        "read: offset 5 is past the end of a.txt, which has 1 lines"
    )
    binary = call("read", path="blob.bin")
    assert binary.is_error and "blob.bin looks like a binary file" in binary.content
    empty = call("read", path="empty.txt")
    assert not empty.is_error and empty.content == "(empty.txt is empty)"


def test_write_creates_parents_and_captures_first(call, ws: Path, recorder):
    result = call("write", path="src/pkg/a.txt", content="hello\n")
    assert not result.is_error
    assert (ws / "src/pkg/a.txt").read_text() == "hello\n"
    assert recorder.calls == [("src/pkg/a.txt", None)]  # captured while it did not exist yet
    assert result.changed_paths == ("src/pkg/a.txt",)
    assert result.display == "wrote 6 B to src/pkg/a.txt"
    assert "Created src/pkg/a.txt" in result.content


def test_write_overwrite_captures_the_old_content(call, ws: Path, recorder):
    (ws / "a.txt").write_text("old")
    result = call("write", path="./a.txt", content="new")
    assert recorder.calls == [("a.txt", b"old")]
    assert (ws / "a.txt").read_text() == "new"
    assert result.content.startswith("Overwrote a.txt")


def test_write_through_an_inner_symlink_captures_the_real_file(call, ws: Path, recorder):
    (ws / "real.txt").write_text("old")
    (ws / "link.txt").symlink_to("real.txt")
    result = call("write", path="link.txt", content="new")
    assert result.changed_paths == ("real.txt",)
    assert recorder.calls == [("real.txt", b"old")]
    assert (ws / "real.txt").read_text() == "new" and (ws / "link.txt").is_symlink()


def test_write_does_not_write_when_capture_fails(call, ws: Path):
    def failing(path: str) -> None:
        raise OSError("disk full")

    ctx = ToolContext(workspace=ws, capture=failing)
    result = call("write", ctx, path="a.txt", content="x")
    assert result.is_error
    assert (
        "could not checkpoint a.txt" in result.content and "nothing was written" in result.content
    )
    assert not (ws / "a.txt").exists()


def test_write_errors_are_clear(call, ws: Path, recorder):
    (ws / "d").mkdir()
    (ws / "file").write_text("")
    assert call("write", path="d", content="x").content == "write: d is a directory"
    nested = call("write", path="file/x.txt", content="x")
    assert nested.is_error and nested.content.startswith("write: cannot write file/x.txt")


def test_edit_replaces_a_unique_string_after_capturing(call, ws: Path, recorder):
    (ws / "a.py").write_text("x = 1\ny = 2\n")
    result = call("edit", path="a.py", old_string="y = 2", new_string="y = 3")
    assert not result.is_error
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"
    assert recorder.calls == [("a.py", b"x = 1\ny = 2\n")]
    assert result.changed_paths == ("a.py",)
    assert result.content == "Replaced 1 occurrence in a.py (first at line 2)."
    assert result.display == "edited a.py (1 replacement)"


def test_edit_missing_or_ambiguous_text_fails_without_writing(call, ws: Path, recorder):
    (ws / "a.py").write_text("x = 1\nx = 1\n")
    missing = call("edit", path="a.py", old_string="z = 1", new_string="z = 2")
    assert missing.is_error and "old_string was not found in a.py" in missing.content
    twice = call("edit", path="a.py", old_string="x = 1", new_string="x = 2")
    assert twice.is_error
    assert "occurs 2 times in a.py" in twice.content and "replace_all" in twice.content
    assert (ws / "a.py").read_text() == "x = 1\nx = 1\n"
    assert recorder.calls == []


def test_edit_replace_all(call, ws: Path):
    (ws / "a.py").write_text("x = 1\nx = 1\n")
    result = call("edit", path="a.py", old_string="x", new_string="y", replace_all=True)
    assert (ws / "a.py").read_text() == "y = 1\ny = 1\n"
    assert result.content == "Replaced 2 occurrences in a.py (first at line 1)."


def test_edit_errors_are_clear(call, ws: Path):
    (ws / "a.txt").write_text("abc")
    (ws / "blob.bin").write_bytes(b"\x00\x01abc")
    (ws / "latin.txt").write_bytes("café".encode("latin-1"))
    assert call("edit", path="nope.txt", old_string="a", new_string="b").content == (
        "edit: no such file: nope.txt"
    )
    assert (
        "old_string is empty" in call("edit", path="a.txt", old_string="", new_string="b").content
    )
    assert "identical" in call("edit", path="a.txt", old_string="a", new_string="a").content
    assert (
        "looks like a binary file"
        in call("edit", path="blob.bin", old_string="abc", new_string="x").content
    )
    assert (
        "not valid UTF-8"
        in call("edit", path="latin.txt", old_string="caf", new_string="x").content
    )


def test_a_write_inside_a_call_names_the_call_that_captured_its_pre_image(ws, call) -> None:
    """`file_checkpoint.call_id`: the frame knows which call's pre-image it holds."""
    (ws / "a.txt").write_text("before")
    seen: list[tuple[str, str, str]] = []

    def capture_for_call(path: str, call_id: str) -> None:
        seen.append((path, call_id, (ws / path).read_text()))

    plain: list[str] = []
    ctx = ToolContext(
        workspace=ws, capture=plain.append, capture_for_call=capture_for_call, call_id="call-7"
    )
    result = call("write", ctx, path="a.txt", content="after")
    assert not result.is_error
    assert seen == [("a.txt", "call-7", "before")] and plain == []
    outside = ToolContext(workspace=ws, capture=plain.append, capture_for_call=capture_for_call)
    call("edit", outside, path="a.txt", old_string="after", new_string="again")
    assert plain == ["a.txt"]  # no call id (cell code): the plain capture
