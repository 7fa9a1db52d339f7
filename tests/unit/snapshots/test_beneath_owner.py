"""A root kernel (a container on a host's files) that restores a file leaves it with the owner
it had: a rewind or undo never hands a host user's file to root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.snapshots.beneath import Beneath


def test_a_replaced_file_keeps_its_owner_under_root(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only a root kernel can give a file another owner (run the suite as root)")
    target = tmp_path / "data.csv"
    target.write_text("old")
    os.chown(target, 4242, 4343)  # a host user's file, as a bind mount shows it
    with Beneath(tmp_path) as tree:
        tree.write_file("data.csv", b"restored", 0o640)
        tree.write_file("new.txt", b"made", 0o644)  # nothing stood there: the kernel's own
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (4242, 4343)
    assert target.read_text() == "restored" and st.st_mode & 0o7777 == 0o640
    assert (tmp_path / "new.txt").stat().st_uid == 0
