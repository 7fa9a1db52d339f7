"""`logician run -o` saves a cell's text as JupyterLab would: one output per run of stream
messages of one name, however the kernel's flushes cut it (a `print` under load can arrive as
its text, then its newline)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from logician_kernel.jupyter.runner import merge_streams


def _stream(name: str, text: str) -> nbformat.NotebookNode:
    return new_output("stream", name=name, text=text)


def test_a_print_cut_by_a_flush_is_saved_as_one_output() -> None:
    cell = new_code_cell("print(d)")
    cell.outputs = [_stream("stdout", "{'a': 1}"), _stream("stdout", "\n")]
    nb = new_notebook(cells=[cell])
    merge_streams(nb)
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [("stdout", "{'a': 1}\n")]
    nbformat.validate(nb)


def test_outputs_keep_their_order_and_streams_of_other_names_stay_apart() -> None:
    figure = new_output("display_data", data={"text/plain": "<Figure>"})
    cell = new_code_cell("...")
    cell.outputs = [
        _stream("stdout", "a"),
        _stream("stdout", "b\n"),
        _stream("stderr", "warn\n"),
        _stream("stdout", "c\n"),
        figure,
        _stream("stdout", "d"),
        _stream("stdout", ["e", "\n"]),  # as a notebook on disk may split it in lines
    ]
    nb = new_notebook(cells=[new_markdown_cell("# title"), cell])
    merge_streams(nb)
    got = [(o.output_type, o.get("name"), o.get("text")) for o in nb.cells[1].outputs]
    assert got == [
        ("stream", "stdout", "ab\n"),
        ("stream", "stderr", "warn\n"),
        ("stream", "stdout", "c\n"),
        ("display_data", None, None),
        ("stream", "stdout", "de\n"),
    ]
    assert nb.cells[0].source == "# title"
