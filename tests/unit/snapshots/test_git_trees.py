"""In-process trees (git_trees.py) against git itself: the same tree ids as `update-index` +
`write-tree`, the same raw diff as `diff-tree`, for random sequences of workspace changes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logician_kernel.snapshots.git_snapshot import GitSnapshotter
from logician_kernel.snapshots.git_trees import TreeStore, parse, serialize

NAMES = ["a", "b", "a.txt", "a-b", "z"]
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
OPS = st.lists(
    st.tuples(
        st.sampled_from(["write", "exec", "link", "remove", "mkdir"]),
        PATHS,
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=12,
)


def git(store: Path, ws: Path, index: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_INDEX_FILE=str(index), GIT_LITERAL_PATHSPECS="1")
    return subprocess.run(
        ["git", f"--git-dir={store}", f"--work-tree={ws}", *args],
        input=stdin,
        env=env,
        check=True,
        capture_output=True,
    ).stdout


def apply(ws: Path, op: str, path: str, n: int) -> None:
    """One change to the workspace; a blocked path (a parent is a file) is replaced."""
    target = ws / path
    for parent in reversed(target.relative_to(ws).parents[:-1]):
        here = ws / parent
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
    if op == "remove":
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        return
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.is_symlink() or target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if op == "mkdir":
        (target / "inside").parent.mkdir(parents=True, exist_ok=True)
        (target / "inside").write_text(f"inside {n}\n")
    elif op == "link":
        os.symlink(f"target-{n}", target)
    else:
        target.write_text(f"{path} {n}\n")
        target.chmod(0o755 if op == "exec" else 0o644)


def files_of(ws: Path) -> list[str]:
    out = []
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git-store" and not Path(root, d).is_symlink()]
        out += [str(Path(root, f).relative_to(ws)) for f in files]
        out += [
            str(Path(root, d).relative_to(ws))
            for d in os.listdir(root)
            if Path(root, d).is_symlink() and Path(root, d).is_dir()
        ]
    return sorted(out)


@settings(
    max_examples=int(os.environ.get("LOGICIAN_TREE_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(OPS, min_size=1, max_size=4))
def test_update_and_diff_match_git(tmp_path_factory: pytest.TempPathFactory, steps) -> None:
    tmp = tmp_path_factory.mktemp("trees")
    ws, store, index = tmp / "ws", tmp / "store", tmp / "index"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    git(store, ws, index, "config", "core.filemode", "true")
    trees = TreeStore(store / "objects", lambda sha: ("missing", b""))
    ours = theirs = git(store, ws, index, "write-tree").decode().strip()
    snap = GitSnapshotter(ws, store)
    for ops in steps:
        touched: set[str] = set()
        for op, path, n in ops:
            apply(ws, op, path, n)
            touched.add(path)
            if op == "mkdir":
                touched.add(f"{path}/inside")
        # What a change detector reports: the touched paths, plus whatever vanished with them
        # (every path on disk now, and every path the last tree had).
        on_disk = set(files_of(ws))
        listed = set(git(store, ws, index, "ls-files", "-z").decode().split("\0")) - {""}
        changes = {p: snap._inc.blob_entry(p) for p in sorted(touched | on_disk | listed)}
        new_ours = trees.update(ours, changes)
        git(store, ws, index, "add", "-A", "--", ".")
        new_theirs = git(store, ws, index, "write-tree").decode().strip()
        assert new_ours == new_theirs
        raw = git(
            store, ws, index, "diff-tree", "-r", "-z", "--no-renames", "--raw", theirs, new_theirs
        )
        assert trees.diff_raw(ours, new_ours) == raw
        ours, theirs = new_ours, new_theirs
    fsck = subprocess.run(["git", f"--git-dir={store}", "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_serialize_round_trips_in_git_order() -> None:
    entries = {
        b"a.txt": ("100644", "1" * 40),
        b"a": ("40000", "2" * 40),
        b"a-b": ("120000", "3" * 40),
    }
    body = serialize(entries)
    # "a-b" < "a.txt" < "a/" in git's order: a directory sorts as if its name ended in "/".
    assert [name for name in parse(body)] == [b"a-b", b"a.txt", b"a"]
    assert parse(body) == entries


EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775a6c842e5391de"


def _folder_of_100(tmp_path: Path) -> tuple[Path, TreeStore, list[str]]:
    """A bare store, its trees, and the root of a folder `d` of 100 empty files."""
    store = tmp_path / "store"
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    trees = TreeStore(store / "objects", lambda sha: ("missing", b""))
    blob = ("100644", EMPTY_BLOB)
    return (
        store,
        trees,
        [trees.update(trees.write({}), {f"d/f{i:03d}.txt": blob for i in range(100)})],
    )


def test_trees_kept_parsed_are_bounded_and_dropped_ones_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle kernel's frames each supersede the trees on their paths: the parsed ones kept
    stay under the bound, and a dropped tree (an old frame's, for a diff or a rewind) is read
    back from the store exactly."""
    import logician_kernel.snapshots.git_trees as git_trees

    monkeypatch.setattr(git_trees, "_CACHE_ENTRIES", 300)
    store, trees, roots = _folder_of_100(tmp_path)
    blob = ("100644", EMPTY_BLOB)
    for i in range(200):  # one changed file per "frame"
        roots.append(trees.update(roots[-1], {f"d/f{i % 100:03d}.txt": None if i % 2 else blob}))
    assert sum(len(e) for e in trees._cache.values()) <= 300
    first_d = trees.lookup(roots[0], "d")
    assert first_d is not None and len(trees.entries(first_d[1])) == 100
    raw = subprocess.run(
        ["git", f"--git-dir={store}", "diff-tree", "-r", "-z", "--no-renames", "--raw"]
        + [roots[0], roots[-1]],
        capture_output=True,
        check=True,
    ).stdout
    assert trees.diff_raw(roots[0], roots[-1]) == raw


def test_trees_a_frame_superseded_are_let_go_at_the_next_frame(tmp_path: Path) -> None:
    """Under the bound too, an idle kernel holds the trees it works on, not every version
    frames before it replaced: after 200 one-file frames on a 100-file folder, the parsed
    trees are the current root and folder and the ones the last frame replaced (kept for its
    diff), and an old frame's folder reads back from the store exactly."""
    _, trees, roots = _folder_of_100(tmp_path)
    for i in range(200):  # each frame gives one file new bytes
        roots.append(trees.update(roots[-1], {f"d/f{i % 100:03d}.txt": ("100644", f"{i:040x}")}))
    previous, last = roots[-2], roots[-1]
    kept = set(trees._cache)
    folders = {trees.lookup(r, "d")[1] for r in (previous, last)}  # type: ignore[index]
    assert kept == {previous, last} | folders, len(kept)
    # The last frame's diff reads only trees still parsed; an old frame's is read again.
    assert trees.diff_raw(previous, last)
    first_d = trees.lookup(roots[0], "d")
    assert first_d is not None and len(trees.entries(first_d[1])) == 100
