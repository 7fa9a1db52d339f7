"""Benchmark: what a frame that changed one file costs in git, by three paths (issue 17).

    .venv/bin/python tests/bench/bench_git_paths.py [--files 1000] [--rounds 50]

A workspace of N small files is snapshotted once into a private store (as GitSnapshotter
does: `--git-dir` + private `GIT_INDEX_FILE`); then, round after round, one file changes and
the frame's git work is timed, interleaved path by path so load skews all alike:

1. `processes`: today's path - `git update-index --add --remove --replace --stdin` (hashes the
   file and writes its blob), `git write-tree`, `git diff-tree -r -z` of the two trees: three
   short git processes.
2. `pygit2`: libgit2 in-process - the index read once and kept, then per frame: hash + write
   the blob, add it, write the index and the tree, diff the trees (only if pygit2 is
   importable; it is not a dependency).
3. `inprocess`: what the kernel does (logician_kernel/snapshots/git_trees.py): the blob and the
   rebuilt subtrees written as loose objects from Python, the frame's diff walked over the
   parsed trees; no process, no index write.
4. `batch`: a long-lived `git hash-object -w --stdin-paths` (the blob) + `git update-index
   --index-info` in a long-lived `--stdin`-fed process cannot return a tree, so this path still
   runs `write-tree` and `diff-tree`: it removes one process of three.

Prints medians and ratios to the process path; exit 0. Not a pytest module.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from logician_kernel.snapshots._fs import write_loose_blob
from logician_kernel.snapshots.git_snapshot import Snapshot
from logician_kernel.snapshots.git_trees import TreeStore
from logician_kernel.snapshots.snapshot_diff import snapshot_diff


def git(env: dict[str, str], base: list[str], *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        [*base, *args], input=stdin, env=env, check=True, capture_output=True
    ).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    try:
        import pygit2
    except ImportError:
        pygit2 = None  # type: ignore[assignment]

    with tempfile.TemporaryDirectory() as tmp:
        ws, store = Path(tmp) / "ws", Path(tmp) / "store"
        for n in range(args.files):
            d = ws / f"d{n // 100:04d}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"f{n % 100:03d}.txt").write_text(f"file {n}\n")
        subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
        env = dict(os.environ, GIT_INDEX_FILE=str(store / "index-a"), GIT_OPTIONAL_LOCKS="0")
        base = ["git", f"--git-dir={store}", f"--work-tree={ws}"]
        paths = sorted(str(p.relative_to(ws)) for p in ws.rglob("*.txt"))
        git(
            env,
            base,
            "update-index",
            "-z",
            "--add",
            "--stdin",
            stdin=b"".join(p.encode() + b"\0" for p in paths),
        )
        first = git(env, base, "write-tree").decode().strip()
        index_b = store / "index-b"
        index_b.write_bytes((store / "index-a").read_bytes())
        trees = {"processes": first, "pygit2": first, "inprocess": first, "batch": first}
        tree_store = TreeStore(store / "objects", lambda sha: ("missing", b""))
        times: dict[str, list[float]] = {k: [] for k in trees}
        hasher = subprocess.Popen(
            [*base, "hash-object", "-w", "--stdin-paths", "--no-filters"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        empty_snaps = (Snapshot(tree=first), Snapshot(tree=first))
        repo = pygit2.Repository(str(store)) if pygit2 else None
        kept: dict[str, object] = {}
        env_c = dict(env, GIT_INDEX_FILE=str(store / "index-c"))
        (store / "index-c").write_bytes((store / "index-a").read_bytes())
        try:
            for r in range(args.rounds):
                path = paths[(r * 7) % len(paths)]
                (ws / path).write_text(f"changed {r}\n")
                kinds = tuple(trees)
                for kind in kinds[r % 4 :] + kinds[: r % 4]:
                    if kind == "pygit2" and repo is None:
                        continue
                    start = time.perf_counter()
                    if kind == "processes":
                        git(
                            env,
                            base,
                            "update-index",
                            "-z",
                            "--add",
                            "--remove",
                            "--replace",
                            "--stdin",
                            stdin=path.encode() + b"\0",
                        )
                        tree = git(env, base, "write-tree").decode().strip()
                        git(
                            env,
                            base,
                            "diff-tree",
                            "-r",
                            "-z",
                            "--no-renames",
                            "--raw",
                            trees[kind],
                            tree,
                        )
                    elif kind == "pygit2":
                        # The index stays loaded between frames (it is per thread): only written.
                        index = kept.setdefault("index", pygit2.Index(str(index_b)))
                        data = (ws / path).read_bytes()
                        blob = repo.create_blob(data)
                        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
                        index.write()
                        tree = str(index.write_tree(repo))
                        repo.get(trees[kind]).diff_to_tree(repo.get(tree))  # type: ignore[union-attr]
                    elif kind == "inprocess":
                        sha = write_loose_blob(store / "objects", (ws / path).read_bytes())
                        tree = tree_store.update(trees[kind], {path: ("100644", sha)})
                        snapshot_diff(tree_store.diff_raw(trees[kind], tree), *empty_snaps)
                    else:
                        assert hasher.stdin is not None and hasher.stdout is not None
                        hasher.stdin.write(str(ws / path).encode() + b"\n")
                        hasher.stdin.flush()
                        sha = hasher.stdout.readline().decode().strip()
                        git(
                            env_c,
                            base,
                            "update-index",
                            "-z",
                            "--index-info",
                            stdin=f"100644 {sha}\t{path}".encode() + b"\0",
                        )
                        tree = git(env_c, base, "write-tree").decode().strip()
                        git(
                            env_c,
                            base,
                            "diff-tree",
                            "-r",
                            "-z",
                            "--no-renames",
                            "--raw",
                            trees[kind],
                            tree,
                        )
                    times[kind].append(time.perf_counter() - start)
                    trees[kind] = tree
        finally:
            hasher.kill()
            hasher.wait()
        assert len(set(trees.values()) - {first}) <= 1, trees  # every path wrote the same tree

    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(
        f"git work of a frame that changed one file, {args.files:,} files, "
        f"{args.rounds} rounds interleaved (load average {load})"
    )
    ref = statistics.median(times["processes"])
    for kind, values in times.items():
        if not values:
            print(f"  {kind:10} (not measured: pygit2 is not installed)")
            continue
        med = statistics.median(values)
        print(f"  {kind:10} median {med * 1000:7.2f} ms   ratio to processes {med / ref:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
