"""Writes that would escape or hang: a FIFO, socket or device is refused at once (the kernel
never blocks on it), a file with a second hard link is refused (the other link may be outside
the workspace), and neither is checkpointed or changed."""

from __future__ import annotations

import os
import socket
import threading

import pytest


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_fifo_is_refused_without_hanging(ws, call, recorder, tool):
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    arguments = {"content": "x"} if tool == "write" else {"old_string": "a", "new_string": "b"}
    done = threading.Event()
    results = []

    def run():
        results.append(call(tool, path="pipe", **arguments))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(10), "the write blocked on a FIFO"
    [result] = results
    assert result.is_error and "pipe is not a regular file" in result.content
    assert recorder.calls == []


def test_a_socket_is_refused(ws, call, tmp_path):
    path = ws / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        result = call("write", path="s.sock", content="x")
    finally:
        server.close()
    assert result.is_error and "not a regular file" in result.content


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_hard_link_to_an_outside_file_is_refused_and_left_alone(ws, call, tmp_path, tool):
    outside = tmp_path / "outside.txt"
    outside.write_text("a secret config\n")
    os.link(outside, ws / "inside.txt")
    arguments = (
        {"content": "pwned"} if tool == "write" else {"old_string": "secret", "new_string": "pwned"}
    )
    result = call(tool, path="inside.txt", **arguments)
    assert result.is_error and "2 hard links" in result.content
    assert outside.read_text() == "a secret config\n"


def test_an_ordinary_write_and_edit_still_work(ws, call):
    assert not call("write", path="a/b.txt", content="one\n").is_error
    assert not call("edit", path="a/b.txt", old_string="one", new_string="two").is_error
    assert (ws / "a" / "b.txt").read_text() == "two\n"
