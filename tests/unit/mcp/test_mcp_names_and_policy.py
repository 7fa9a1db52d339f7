"""MCP tool names (namespaced, valid, deterministic), the `[mcp]` schema's errors, and the
permission policy's treatment of MCP calls: default ask, `readOnlyHint` and read-only mode,
`mcp(...)` rules."""

from __future__ import annotations

import re
from pathlib import Path

import pydantic
import pytest

from logician_kernel.config import LogicianSettings, PermissionSettings
from logician_kernel.mcp.names import assign, cut, namespaced, offered
from logician_kernel.policy import PermissionPolicy

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_names_are_namespaced_valid_and_bounded() -> None:
    taken: set[str] = set()
    assert namespaced("files", "search", taken) == "files__search"
    odd = namespaced("files", "read file.v2/α", taken)
    assert odd == "files__read_file_v2__" and VALID.match(odd)
    long = namespaced("files", "x" * 100, taken)
    assert len(long) == 64 and VALID.match(long)


def test_collisions_are_resolved_the_same_way_every_time() -> None:
    listing = [("b", ["do it", "do_it"]), ("a", ["x"])]
    first = assign(listing)
    assert first == assign(list(reversed(listing)))
    assert first["b"] == ["b__do_it", "b__do_it_2"] and first["a"] == ["a__x"]
    long = assign([("s", ["y" * 70, "y" * 71])])["s"]
    assert sorted(len(n) for n in long) == [64, 64]
    assert len(set(long)) == 2


def test_two_tools_a_server_lists_under_one_name_both_survive_in_listing_order() -> None:
    """The attack report: a server listing `dup` twice was offered only the second."""
    names = assign([("s", ["dup", "other", "dup", "dup"])])["s"]
    assert names == ["s__dup", "s__other", "s__dup_2", "s__dup_3"]


def test_a_server_with_too_many_tools_is_cut_with_a_notice_naming_it_and_the_count() -> None:
    kept, notice = cut("big", list(range(130)), 128)
    assert kept == list(range(128))
    assert notice is not None and "'big'" in notice and "130 tools" in notice
    assert "first 128" in notice and "mcp.max_tools_per_server" in notice
    assert cut("small", [1, 2], 128) == ([1, 2], None)
    assert LogicianSettings().mcp.max_tools_per_server == 128
    with pytest.raises(pydantic.ValidationError) as info:
        LogicianSettings.model_validate({"mcp": {"max_tools_per_server": 0}})
    assert "max_tools_per_server" in str(info.value)


def test_allowed_and_excluded_globs() -> None:
    assert offered("fetch_page", ["search", "fetch_*"], [])
    assert not offered("delete", ["search", "fetch_*"], [])
    assert not offered("fetch_secret", None, ["*_secret"])


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        ({}, "exactly one of `command`"),
        ({"command": "python", "url": "http://x"}, "exactly one of `command`"),
        ({"url": "ftp://host"}, "url must start with http"),
        ({"command": "python", "connect_timeout_seconds": 0}, "greater than 0"),
    ],
)
def test_bad_server_settings_say_which_field(server: dict, problem: str) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        LogicianSettings.model_validate({"mcp": {"servers": {"files": server}}})
    assert problem in str(info.value)
    assert "mcp.servers.files" in str(info.value)


def test_server_names_may_not_hold_the_separator() -> None:
    with pytest.raises(pydantic.ValidationError, match="separates server and tool"):
        LogicianSettings.model_validate({"mcp": {"servers": {"a__b": {"command": "x"}}}})


def _policy(tmp_path: Path, **settings: object) -> PermissionPolicy:
    return PermissionPolicy(PermissionSettings.model_validate(settings), workspace=tmp_path)


def test_mcp_calls_ask_by_default_even_when_the_server_says_read_only(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    for read_only in (True, False):
        decision = policy.decide("files__search", read_only, {"query": "x"})
        assert decision.action == "ask" and "MCP tool" in decision.reason
    assert policy.decide("files__search", True, {}, mode="full-auto").action == "allow"
    assert policy.decide("files__write", False, {}, mode="auto-edit").action == "ask"
    assert policy.suggest_rule("files__search", {}) == "mcp(files__search)"


def test_read_only_mode_denies_mcp_tools_without_the_read_only_hint(tmp_path: Path) -> None:
    policy = _policy(tmp_path, mode="read-only")
    denied = policy.decide("files__write_note", False, {"name": "a"})
    assert denied.action == "deny" and denied.basis == "read_only_mode"
    assert policy.decide("files__search", True, {"query": "x"}).action == "ask"


def test_mcp_rules_match_by_namespaced_name(tmp_path: Path) -> None:
    policy = _policy(
        tmp_path, allow=["mcp(files__search)", "mcp(notes__*)"], deny=["mcp(*__delete*)"]
    )
    allowed = policy.decide("files__search", True, {"query": "x"})
    assert allowed.action == "allow" and allowed.rule == "mcp(files__search)"
    assert policy.decide("notes__write_note", False, {}).action == "allow"
    assert policy.decide("files__write_note", False, {}).action == "ask"
    assert policy.decide("notes__delete_all", False, {}).action == "deny"
    # `mcp` rules never match our own tools, and a bare `mcp` allows every MCP tool.
    assert _policy(tmp_path, allow=["mcp"]).decide("bash", False, {"command": "ls"}).action == "ask"
    assert _policy(tmp_path, allow=["mcp"]).decide("x__y", False, {}).action == "allow"
