"""A trusted project's MCP servers: their command, args, env, url and headers are gated
fields, held back with a notice naming each until the user allows that field with that
value; a server left with nothing to start is dropped, never a failed load."""

from __future__ import annotations

import pytest

from logician_kernel.config import ConfigError
from logician_kernel.config.commands import trust

PROJECT = (
    "[mcp.servers.files]\n"
    'command = "python"\n'
    'args = ["-m", "evil_server"]\n'
    'allowed_tools = ["search"]\n'
    "[mcp.servers.tracker]\n"
    'url = "http://127.0.0.1:8765/mcp"\n'
    'headers = { Authorization = "env:TRACKER_TOKEN" }\n'
)


def test_project_mcp_servers_wait_for_the_users_allow_of_each_field(sandbox):
    sandbox.write_project(PROJECT)
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.mcp.servers == {}  # nothing left to start: both dropped, load fine
    assert set(cfg.held_back) == {
        "mcp.servers.files.command",
        "mcp.servers.files.args",
        "mcp.servers.tracker.url",
        "mcp.servers.tracker.headers",
    }
    joined = "\n".join(cfg.notices)
    assert "mcp.servers.files.command = 'python' held back" in joined
    assert "a program the kernel starts as an MCP server" in joined
    assert "`logician trust --allow mcp.servers.files.command`" in joined

    trust(
        sandbox.ws,
        user_dir=sandbox.user_dir,
        allow=["mcp.servers.files.command", "mcp.servers.files.args"],
    )
    cfg = sandbox.load()
    files = cfg.settings.mcp.servers["files"]
    assert (files.command, files.args, files.allowed_tools) == (
        "python",
        ("-m", "evil_server"),
        ("search",),
    )
    assert "tracker" not in cfg.settings.mcp.servers
    assert "mcp.servers.tracker.url" in cfg.held_back


def test_a_changed_command_is_held_back_again(sandbox):
    sandbox.write_project(PROJECT)
    trust(
        sandbox.ws,
        user_dir=sandbox.user_dir,
        allow=["mcp.servers.files.command", "mcp.servers.files.args"],
    )
    sandbox.write_project(PROJECT.replace('"python"', '"/tmp/other"'))
    sandbox.trust()
    cfg = sandbox.load()
    assert "files" not in cfg.settings.mcp.servers
    assert "mcp.servers.files.command" in cfg.held_back


def test_allowing_an_unknown_field_is_a_clear_error(sandbox):
    sandbox.write_project(PROJECT)
    with pytest.raises(ConfigError, match="mcp.servers.files.cwd: not a gated field"):
        trust(sandbox.ws, user_dir=sandbox.user_dir, allow=["mcp.servers.files.cwd"])


def test_a_project_profiles_mcp_server_is_gated_too(sandbox):
    sandbox.write_project(
        '[profiles.ci.mcp.servers.files]\ncommand = "python"\nallowed_tools = ["search"]\n'
    )
    sandbox.trust()
    cfg = sandbox.load(env={"LOGICIAN_PROFILE": "ci"})
    assert cfg.settings.mcp.servers == {}
    assert cfg.held_back == ("profiles.ci.mcp.servers.files.command",)
    trust(sandbox.ws, user_dir=sandbox.user_dir, allow=["profiles.ci.mcp.servers.files.command"])
    cfg = sandbox.load(env={"LOGICIAN_PROFILE": "ci"})
    assert cfg.settings.mcp.servers["files"].command == "python"
    assert cfg.held_back == ()
