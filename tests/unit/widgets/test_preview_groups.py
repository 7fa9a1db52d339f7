"""The rewind dialog's files by directory: 20,000 files created in one directory are one line
with a count, every file is in exactly one group, and a page is a bounded slice of a group."""

from __future__ import annotations

from logician_kernel.jupyter.preview_groups import group_files, page


def files(paths: list[str], action: str = "delete") -> list[dict[str, str]]:
    return [{"path": p, "action": action} for p in paths]


def test_twenty_thousand_files_in_one_directory_are_one_group_with_counts() -> None:
    plan = (
        files([f"data/parts/p{i:05d}.csv" for i in range(19_998)])
        + files(["data/parts/index.csv", "notes.txt"], "restore")
        + files(["data/parts/gone.csv"], "recreate")
    )
    groups = group_files(plan)
    assert [g.summary() for g in groups.values()] == [
        {"directory": "", "below": False, "delete": 0, "restore": 1, "recreate": 0},
        {"directory": "data/parts/", "below": False, "delete": 19_998, "restore": 2, "recreate": 1},
    ]
    parts = groups["data/parts/"]
    assert page(parts, 0, 200)[0]["path"] == "data/parts/p00000.csv"
    assert len(page(parts, 19_900, 200)) == 100
    assert page(parts, 20_000, 200) == []


def test_too_many_directories_fold_into_their_ancestors_and_lose_no_file() -> None:
    plan = files([f"runs/r{i:03d}/out/log.txt" for i in range(300)] + ["runs/summary.csv", "a.py"])
    groups = group_files(plan, limit=10)
    assert list(groups) == ["", "runs/"]
    assert groups["runs/"].below and groups["runs/"].summary()["delete"] == 301
    assert sum(len(g.files) for g in groups.values()) == len(plan)
    # under the limit, every directory is its own group
    assert len(group_files(plan, limit=1000)) == 302


def test_nothing_to_restore_is_no_group() -> None:
    assert group_files([]) == {}
