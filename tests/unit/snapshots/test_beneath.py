"""The walk beneath the workspace root (snapshots/beneath.py), with openat2 and with the
per-component fallback: hostile paths are refused by name, a symlink at any parent level is a
conflict naming that level, a final symlink is replaced (never written through), and nothing
outside changes."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.snapshots import beneath
from logician_kernel.snapshots.beneath import Beneath, Conflict, PathRefused, blocked_parent
from logician_kernel.snapshots.perms import remove_debris


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(beneath, "openat2_available", False)
    elif not beneath.openat2_available:
        pytest.skip("openat2 is unavailable here (kernel < 5.6 or a seccomp filter)")
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "f.txt").write_text("inside")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "b" / "c").mkdir(parents=True)
    (out / "b" / "c" / "f.txt").write_text("outside")
    (out / "c").mkdir()
    (out / "c" / "f.txt").write_text("outside")
    (out / "f.txt").write_text("outside")
    return out


def listing(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = "dir"
        for name in filenames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = Path(
                dirpath, name
            ).read_bytes()
    return out


@pytest.mark.parametrize(
    "path", ["../x", "a/../../x", "/etc/passwd", "", "a//f", "a/./f", "a/b/", "a\0b"]
)
def test_hostile_paths_are_refused_by_name(ws: Path, mode: str, path: str) -> None:
    with Beneath(ws) as tree:
        for op in (
            lambda: tree.write_file(path, b"x", 0o644),
            lambda: tree.unlink(path),
            lambda: tree.symlink(path, "t"),
            lambda: tree.lstat(path),
        ):
            with pytest.raises(PathRefused) as caught:
                op()
            assert repr(path) in str(caught.value)
        if path:
            assert repr(path) in (tree.blocked(path) or "")
    if path:
        assert repr(path) in (blocked_parent(ws, path) or "")
    assert not (ws.parent / "x").exists()


@pytest.mark.parametrize("name", ["..", ".", "", "x\0y", "/x"])
def test_hostile_names_under_directories_already_open_are_refused(
    ws: Path, mode: str, name: str
) -> None:
    """Directories a tree has opened answer later paths beneath them without a walk: the last
    component is still checked by name."""
    with Beneath(ws) as tree:
        assert tree.lstat("a/b/c/f.txt") is not None  # "a", "a/b" and "a/b/c" now open
        for head in ("", "a", "a/b", "a/b/c"):
            path = f"{head}/{name}" if head else name
            for op in (tree.lstat, tree.unlink):
                with pytest.raises(PathRefused):
                    op(path)
    assert (ws / "a/b/c/f.txt").exists()


@pytest.mark.parametrize("level", ["a", "a/b", "a/b/c"])
def test_a_symlink_at_any_parent_level_is_a_conflict_naming_it(
    ws: Path, outside: Path, mode: str, level: str
) -> None:
    shutil.rmtree(ws / level)
    os.symlink(outside, ws / level)  # outside holds the same names below that level
    before = listing(outside)
    ops = {
        "write": lambda tree: tree.write_file("a/b/c/f.txt", b"evil", 0o644),
        "create": lambda tree: tree.write_file("a/b/c/new.txt", b"evil", 0o644),
        "unlink": lambda tree: tree.unlink("a/b/c/f.txt"),
        "symlink": lambda tree: tree.symlink("a/b/c/f.txt", "/etc/passwd"),
        "lstat": lambda tree: tree.lstat("a/b/c/f.txt"),
        "rmdir": lambda tree: tree.rmdir("a/b/c/d"),
        "rename": lambda tree: tree.rename("a/b/c/f.txt", "g.txt"),
    }
    want = f"{level}/: a directory became a symlink; left alone"
    with Beneath(ws) as tree:
        for name, op in ops.items():
            with pytest.raises(Conflict) as caught:
                op(tree)
            assert str(caught.value) == want, name
        assert tree.blocked("a/b/c/f.txt") == want
    assert blocked_parent(ws, "a/b/c/f.txt") == want
    assert listing(outside) == before


def test_a_parent_that_became_a_file_is_a_conflict(ws: Path, mode: str) -> None:
    shutil.rmtree(ws / "a" / "b")
    (ws / "a" / "b").write_text("a file now")
    with Beneath(ws) as tree, pytest.raises(Conflict, match="a/b/: a directory became a file"):
        tree.write_file("a/b/c/f.txt", b"x", 0o644)
    assert (ws / "a" / "b").read_text() == "a file now"


def test_a_final_symlink_is_replaced_never_written_through(
    ws: Path, outside: Path, mode: str
) -> None:
    target = ws / "a" / "b" / "c" / "f.txt"
    target.unlink()
    os.symlink(outside / "f.txt", target)
    with Beneath(ws) as tree:
        tree.write_file("a/b/c/f.txt", b"restored", 0o640)
    assert not target.is_symlink() and target.read_bytes() == b"restored"
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert (outside / "f.txt").read_text() == "outside"
    # a symlink the frame recorded comes back as a symlink (data, not resolved) ...
    with Beneath(ws) as tree:
        tree.symlink("a/b/c/f.txt", str(outside / "f.txt"))
        assert os.readlink(target) == str(outside / "f.txt")
        # ... and deleting it removes the link, not what it points to
        tree.unlink("a/b/c/f.txt")
    assert not os.path.lexists(target) and (outside / "f.txt").read_text() == "outside"


def test_a_planted_temp_symlink_is_not_written_through(ws: Path, outside: Path, mode: str) -> None:
    os.symlink(outside / "f.txt", ws / "a" / ".new.txt.logician-restore")
    with Beneath(ws) as tree:
        tree.write_file("a/new.txt", b"n", 0o644)
    assert (ws / "a" / "new.txt").read_bytes() == b"n"
    assert (outside / "f.txt").read_text() == "outside"
    assert not os.path.lexists(ws / "a" / ".new.txt.logician-restore")


def test_missing_parents_are_made_and_an_opened_directory_is_followed_not_its_name(
    ws: Path, outside: Path, mode: str
) -> None:
    with Beneath(ws) as tree:
        tree.write_file("x/y/z.txt", b"z", 0o644)
        assert (ws / "x" / "y" / "z.txt").read_bytes() == b"z"
        # `x/y` is open now; another program moves it and puts a symlink in its place: the
        # rest of this pass writes into the directory it opened (inside), never outside.
        os.rename(ws / "x" / "y", ws / "moved")
        os.symlink(outside, ws / "x" / "y")
        tree.write_file("x/y/f.txt", b"late", 0o644)
    assert (ws / "moved" / "f.txt").read_bytes() == b"late"
    assert (outside / "f.txt").read_text() == "outside"


def test_openat2_refused_by_seccomp_falls_back_to_the_walk(
    ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def refused(dir_fd: int, rel: str) -> int:
        calls.append(rel)
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(beneath, "openat2_available", True)
    monkeypatch.setattr(beneath, "_openat2", refused)
    (ws / "a" / "b" / "c" / "f.txt").unlink()
    (ws / "a" / "b" / "c").rmdir()
    os.symlink(outside / "c", ws / "a" / "b" / "c")
    with Beneath(ws) as tree:
        with pytest.raises(Conflict, match="a/b/c/"):
            tree.write_file("a/b/c/f.txt", b"x", 0o644)
        tree.write_file("a/b/g.txt", b"g", 0o644)
    assert calls and beneath.openat2_available is False  # tried once, then the walk for good
    assert (ws / "a" / "b" / "g.txt").read_bytes() == b"g"
    assert (outside / "c" / "f.txt").read_text() == "outside"


def test_remove_debris_never_removes_behind_a_symlink(ws: Path, outside: Path, mode: str) -> None:
    (outside / "empty").mkdir()
    os.symlink(outside, ws / "l")
    removed = remove_debris(ws, ["l/empty/f.txt"], since="2000-01-01T00:00:00+00:00")
    assert removed == [] and (outside / "empty").is_dir()


def test_undo_of_a_rewind_that_brought_a_symlink_back_writes_nothing_through_it(
    tmp_path: Path,
) -> None:
    from logician_kernel.frames.undo import undo_rewind
    from logician_kernel.workspace.open_thread import OpenThread

    ws = tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    (ws / "real" / "x").write_text("x")
    os.symlink("real", ws / "ld")
    (ws / "df").write_text("a file")
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "t"}, max_file_bytes=100_000)
    try:
        cp = session.checkpoints
        assert cp is not None
        cp.wait_for_first_snapshot()
        cp.open_frame(execution_count=None, cell_id=None, code="cell")
        (ws / "ld").unlink()
        (ws / "ld").mkdir()
        (ws / "ld" / "y").write_text("y")
        (ws / "df").unlink()
        (ws / "df").mkdir()
        (ws / "df" / "a.txt").write_text("a")
        frame = cp.close_frame("ok").frame
        frame_rewind.rewind(cp, frame)
        assert os.readlink(ws / "ld") == "real" and (ws / "df").read_text() == "a file"
        item = undo_rewind(cp, None, force=True)
        actions = {p.path: (p.action, p.detail) for p in item.paths}
        # ld/ was a directory before the rewind (not captured: the undo cannot make it one), so
        # ld/y cannot come back - and is never written through the symlink into real/.
        assert actions["ld/y"] == ("conflict", "ld/: a directory became a symlink; left alone")
        assert sorted(os.listdir(ws / "real")) == ["x"] and os.readlink(ws / "ld") == "real"
        # The same for a directory that the rewind turned back into a file.
        assert actions["df/a.txt"] == ("conflict", "df/: a directory became a file; left alone")
        assert (ws / "df").read_text() == "a file"
    finally:
        session.close()
