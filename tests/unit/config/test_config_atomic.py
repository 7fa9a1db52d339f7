"""Atomic single-field updates: concurrent writers lose nothing, a writer killed before the
rename leaves the old file intact, and untouched text survives byte for byte."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import tomlkit

from logician_kernel.config import ConfigError, config_set, config_unset
from logician_kernel.config._atomic import atomic_update, patch_toml

RICH = """\
# My Logician settings   (hand-written; keep my notes!)

[model]   # which model
provider  =  "openai"     # spacing is mine
name = 'gpt-4.1'          # literal string
request_timeout_seconds = 120.0

# --- permissions ---------------------------------------------------------
[permissions]
allow = [
    "read(**)",        # reading is fine
    "bash(git status*)",
]
deny = [ "bash(rm -rf*)" ]

[budget]
max_turns = 12
prices = { "gpt-4.1" = { input_per_mtok = 2.0, output_per_mtok = 8.0 } }

# trailing comment at the end of the file
"""


def _diff(before: str, after: str) -> tuple[list[str], list[str]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return [line for line in a if line not in b], [line for line in b if line not in a]


def test_changing_a_key_preserves_everything_else_byte_for_byte(sandbox) -> None:
    sandbox.write_user(RICH)
    _, message = config_set(sandbox.load(), "budget.max_turns", "30", persist="user")
    after = sandbox.user_file.read_text()
    assert after == RICH.replace("max_turns = 12", "max_turns = 30")
    assert "Saved budget.max_turns = 30" in message


def test_changing_a_commented_key_keeps_its_comment(sandbox) -> None:
    sandbox.write_user(RICH)
    config_set(sandbox.load(), "model.name", "gpt-5", persist="user")
    after = sandbox.user_file.read_text()
    removed, added = _diff(RICH, after)
    assert removed == ["name = 'gpt-4.1'          # literal string\n"]
    assert len(added) == 1 and added[0].startswith("name = ") and "# literal string" in added[0]
    assert sandbox.load().settings.model.name == "gpt-5"


def test_adding_a_key_inserts_exactly_one_line(sandbox) -> None:
    sandbox.write_user(RICH)
    config_set(sandbox.load(), "model.max_retries", "5", persist="user")
    after = sandbox.user_file.read_text()
    removed, added = _diff(RICH, after)
    assert (removed, added) == ([], ["max_retries = 5\n"])
    # The new key joins its table, before the comment that introduces the next one.
    assert "request_timeout_seconds = 120.0\nmax_retries = 5\n\n# --- permissions" in after


def test_adding_a_new_table_appends_it(sandbox) -> None:
    sandbox.write_user(RICH)
    config_set(sandbox.load(), "ui.coalesce_hz", "4", persist="user")
    after = sandbox.user_file.read_text()
    assert after.startswith(RICH)
    assert tomlkit.parse(after).unwrap()["ui"] == {"coalesce_hz": 4}


def test_unset_removes_only_that_key(sandbox) -> None:
    sandbox.write_user(RICH)
    config_unset(sandbox.load(), "model.request_timeout_seconds", persist="user")
    assert sandbox.user_file.read_text() == RICH.replace("request_timeout_seconds = 120.0\n", "")


def test_a_missing_file_is_created_with_its_directory(sandbox) -> None:
    assert not sandbox.user_dir.exists()
    cfg, _ = config_set(sandbox.load(), "permissions.mode", "auto-edit", persist="user")
    assert cfg.settings.permissions.mode == "auto-edit"
    assert cfg.provenance("permissions.mode") == "user"
    text = sandbox.user_file.read_text()
    # The editor's schema directive first (taplo reads it there), then the header.
    assert text.splitlines()[0].startswith("#:schema file://")
    assert text.splitlines()[1].startswith("# Logician configuration.")
    assert tomlkit.parse(text).unwrap() == {"permissions": {"mode": "auto-edit"}}


def test_a_symlinked_file_is_updated_at_its_target(sandbox) -> None:
    target = sandbox.root / "dotfiles" / "logician.toml"
    target.parent.mkdir()
    target.write_text('[model]\nname = "a"\n')
    sandbox.user_dir.mkdir()
    sandbox.user_file.symlink_to(target)
    config_set(sandbox.load(), "model.name", "b", persist="user")
    assert sandbox.user_file.is_symlink()
    assert target.read_text() == '[model]\nname = "b"\n'


def test_an_invalid_value_is_refused_before_anything_is_written(sandbox) -> None:
    sandbox.write_user(RICH)
    before = sandbox.user_file.read_bytes()
    with pytest.raises(ConfigError, match=r"budget\.max_turns: expected a value greater than"):
        config_set(sandbox.load(), "budget.max_turns", "0", persist="user")
    assert sandbox.user_file.read_bytes() == before
    assert not (sandbox.user_dir / ".config.toml.tmp").exists()


def test_a_file_with_broken_toml_is_not_touched(sandbox) -> None:
    sandbox.write_user("[model\nname = 1\n")
    with pytest.raises(ConfigError, match=r"(?s)line 1, column 6: invalid TOML.*was not modified"):
        config_set(sandbox.load(), "model.name", "x", persist="user")
    assert sandbox.user_file.read_text() == "[model\nname = 1\n"


def test_an_exception_before_the_rename_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("a = 1\n")

    def boom(temp: Path) -> None:
        assert temp.read_text() == "a = 2\n"
        raise RuntimeError("dies here")

    with pytest.raises(RuntimeError):
        atomic_update(path, lambda old: "a = 2\n", before_replace=boom)
    assert path.read_text() == "a = 1\n"
    assert atomic_update(path, lambda old: old.replace("1", "3")) == "a = 3\n"  # lock released


WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from logician_kernel.config import _atomic, load_effective_config
    from logician_kernel.config.commands import config_set

    ws, index, count, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else ""
    marker = Path(sys.argv[6]) if len(sys.argv) > 6 else None
    if mode:
        def hook(temp):
            Path(str(marker) + ".part").write_text(str(temp))
            os.replace(str(marker) + ".part", marker)  # the parent never sees it half-written
            if mode == "exit":
                os._exit(9)
            time.sleep(60)
        _atomic.before_replace_hook = hook
    cfg = load_effective_config(Path(ws), env=os.environ)
    while not go.exists():
        time.sleep(0.005)
    for j in range(count):
        value = "{ input_per_mtok = %d, output_per_mtok = %d }" % (index, j)
        cfg, _ = config_set(cfg, f"budget.prices.w{index}_{j}", value, persist="user")
    """
)


def _spawn(sandbox, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, **sandbox.env}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(sandbox.ws), *args], env=env, stderr=subprocess.PIPE
    )


def _concurrent_writer(ws: str, env: dict[str, str], index: int, count: int, go: str) -> None:
    """One writer process: persist `count` keys of its own into the shared user file."""
    from logician_kernel.config import _atomic, config_set, load_effective_config

    # 32 writes queue on one lock, each with its fsyncs: at load 30 the last one waited longer
    # than the 10 s a write waits for another's (a stressed run). What is written is the
    # point here, not how long a writer waits.
    _atomic.LOCK_TIMEOUT = 300.0
    cfg = load_effective_config(Path(ws), env=env)
    while not Path(go).exists():
        time.sleep(0.002)
    for j in range(count):
        value = f"{{ input_per_mtok = {index}, output_per_mtok = {j} }}"
        cfg, _ = config_set(cfg, f"budget.prices.w{index}_{j}", value, persist="user")


def test_concurrent_writers_lose_no_key_and_the_file_always_parses(sandbox) -> None:
    sandbox.write_user('# shared file\n[model]\nname = "shared"  # keep\n')
    go = sandbox.root / "go"
    writers, per_writer = 8, 4
    # Real processes, forked from a server that imported the package once (fast to start).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["logician_kernel.config"])
    env = {**sandbox.env, "GIT_CEILING_DIRECTORIES": str(sandbox.root)}
    procs = [
        ctx.Process(target=_concurrent_writer, args=(str(sandbox.ws), env, i, per_writer, str(go)))
        for i in range(writers)
    ]
    for p in procs:
        p.start()
    go.touch()
    reads = 0
    while any(p.is_alive() for p in procs):
        tomlkit.parse(sandbox.user_file.read_text())  # never torn, never half-written
        reads += 1
        time.sleep(0.002)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert reads > 0
    data = tomlkit.parse(sandbox.user_file.read_text()).unwrap()
    prices = data["budget"]["prices"]
    assert set(prices) == {f"w{i}_{j}" for i in range(writers) for j in range(per_writer)}
    assert data["model"] == {"name": "shared"}
    assert sandbox.user_file.read_text().startswith(
        '# shared file\n[model]\nname = "shared"  # keep\n'
    )
    assert sandbox.load().notices == ()


@pytest.mark.parametrize("how", ["sigkill", "exit"])
def test_a_writer_killed_between_temp_write_and_rename_leaves_the_old_file(sandbox, how) -> None:
    original = sandbox.write_user(RICH).read_bytes()
    go, marker = sandbox.root / "go", sandbox.root / "at-rename"
    go.touch()
    proc = _spawn(sandbox, "0", "1", str(go), "sleep" if how == "sigkill" else "exit", str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None or how == "exit", (
            proc.stderr.read().decode() if proc.stderr else ""
        )
        assert time.monotonic() < deadline
        time.sleep(0.01)
    temp = Path(marker.read_text())
    if how == "sigkill":
        assert "w0_0" in temp.read_text()  # the new content was fully written...
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    if proc.stderr:
        proc.stderr.close()
    assert sandbox.user_file.read_bytes() == original  # ...but never renamed into place
    # The dead writer's lock is gone with it; the next writer succeeds and keeps everything.
    cfg, _ = config_set(sandbox.load(), "budget.max_turns", "99", persist="user")
    assert sandbox.user_file.read_text() == RICH.replace("max_turns = 12", "max_turns = 99")
    assert not temp.exists()


def test_patch_toml_refuses_to_treat_a_value_as_a_table() -> None:
    with pytest.raises(ConfigError, match="model is not a table"):
        patch_toml('model = "x"\n', ("model", "name"), "y")
