"""The README cannot drift from the product: its quick start runs on a real kernel and does
what the text says, every command of its cheat sheet is one the kernel accepts, and its
configuration lines are settings the kernel knows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel import AgentSession
from logician_kernel.config import load_effective_config
from logician_kernel.jupyter.magics import MANAGEMENT_COMMANDS

pytestmark = pytest.mark.kernel

README = (Path(__file__).parents[2] / "README.md").read_text()


def section(title: str) -> str:
    """The text of the `## title` section (up to the next `## `)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, f"README has no section {title!r}"
    return match.group(1)


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced code block."""
    return re.findall(r"^ *```(\w*)\n(.*?)^ *```", text, re.S | re.M)


def test_the_readme_is_a_users_page() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250, len(lines)
    assert not re.search(r"\b[Ii]ssue \d+|\btonight\b|What was measured", README)
    assert "bash scripts/test.sh" in section("Tests")


def test_the_quick_start_cells_do_what_the_readme_says(tmp_path: Path, kernel_env) -> None:
    cells = [body for _, body in blocks(section("Five minutes in JupyterLab"))]
    assert len(cells) == 3 and cells[-1].strip() == "%logician rewind --last"
    ws = tmp_path / "ws"
    ws.mkdir()
    kernel = Kernel(ws, kernel_env)
    try:
        for code in cells:
            result = kernel.run(code)
            assert result.status == "ok", result.text
        # "notes.txt says `first draft` again and `x` is gone"
        assert (ws / "notes.txt").read_text() == "first draft\n"
        assert kernel.run("print('x' in globals())").stdout.strip() == "False"
        # "Run `%logician undo` and the overwrite and `x = 42` are back."
        assert "%logician undo" in section("Five minutes in JupyterLab")
        assert kernel.run("%logician undo").status == "ok"
        assert (ws / "notes.txt").read_text() == "overwritten!\n"
        assert kernel.run("print(x)").stdout.strip() == "42"
    finally:
        kernel.shutdown()


def _cheat_sheet_commands() -> list[str]:
    (_, sheet), *_ = blocks(section("Cheat sheet"))
    commands = []
    for line in sheet.splitlines():
        text = line.split("#", 1)[0].strip()
        if not text.startswith("%logician"):
            continue  # %%logician needs a model; its prompt form is tested elsewhere
        head, *alternatives = [part.strip() for part in text.split("|")]
        commands.append(head)
        words = head.split()
        for alternative in alternatives:
            # `%logician status | clear` lists commands; `rewind 7 --files-only | --dry-run`
            # lists options of the same command.
            prefix = words[:-1] if alternative.startswith("--") else words[:1]
            commands.append(" ".join([*prefix, alternative]))
    return commands


def test_every_cheat_sheet_command_is_accepted_by_the_kernel(tmp_path: Path, kernel_env) -> None:
    commands = _cheat_sheet_commands()
    assert len(commands) >= 20
    for command in commands:
        word = command.split()[1] if len(command.split()) > 1 else ""
        assert word in MANAGEMENT_COMMANDS, command
    ws = tmp_path / "ws"
    ws.mkdir()
    kernel = Kernel(ws, kernel_env)
    try:
        for n in range(9):  # frames 1..9, so `7` names a real frame after one rewind
            assert kernel.run(f"open('f{n}.txt', 'w').write('{n}')").status == "ok"
        assert kernel.run("%logician rewind --last").status == "ok"  # for `undo` to take back
        for command in commands:
            if command.split()[1:2] == ["rewind"] and "--resume" not in command:
                command += "" if "--dry-run" in command else " --dry-run"
            result = kernel.run(command)
            # Accepted, and with nothing to do they say so (and exit as an error, like a
            # shell command that had nothing to act on).
            nothing = {"--resume": "nothing to resume", "compact": "nothing to compact"}
            said = [text for key, text in nothing.items() if key in command.split()]
            if said:
                assert said[0] in result.text, result.text
                continue
            assert result.status == "ok", (command, result.text)
            assert "unknown command" not in result.text and "usage:" not in result.text.lower(), (
                command, result.text)  # fmt: skip
    finally:
        kernel.shutdown()


def test_the_model_lines_and_the_script_are_what_the_package_takes(tmp_path: Path) -> None:
    text = section("Connect a model")
    env = {"LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    for name, value in re.findall(r"(LOGICIAN_[A-Z_]+)=(\S*)", text):
        env[name] = value
    cfg = load_effective_config(tmp_path, env=env)
    assert cfg.notices == (), cfg.notices
    assert cfg.settings.model.name == "qwen2.5-coder:7b"
    assert cfg.settings.model.base_url == "http://localhost:11434/v1"
    (script,) = [body for lang, body in blocks(section("Other ways in")) if lang == "python"]
    tree = ast.parse("\n".join(line[2:] if line.startswith("  ") else line
                               for line in script.splitlines()))  # fmt: skip
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert {"open", "run", "rewind", "undo_rewind", "close"} <= used
    for method in {"open", "run", "rewind", "undo_rewind", "close"}:
        assert callable(getattr(AgentSession, method)), method
