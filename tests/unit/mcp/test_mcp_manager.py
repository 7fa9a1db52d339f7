"""`McpManager` against real MCP servers (tests/mcp/servers.py, written with the SDK's
`MCPServer`): stdio and streamable HTTP connect in the background and serve calls; a server
that never answers `initialize` fails after its connect timeout; one that crashes after
listing is reported failed; stderr lands in the log; a restart offers the cached tools,
marked stale; calls time out and cancel; no server process outlives `close`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from mcp_servers.helpers import alive, http_server, server_pids, stdio_server, wait_until  # noqa: E402

from logician_kernel.config import McpSettings  # noqa: E402
from logician_kernel.mcp import McpManager  # noqa: E402
from logician_kernel.tools import ToolContext  # noqa: E402


@pytest.fixture
def pid_dir(tmp_path: Path) -> Path:
    d = tmp_path / "pids"
    d.mkdir()
    return d


def _manager(tmp_path: Path, servers: dict, env: dict | None = None) -> McpManager:
    manager = McpManager(tmp_path, env or {})
    manager.apply(McpSettings.model_validate({"servers": servers}))
    return manager


def _state(manager: McpManager, name: str) -> str:
    return next(s.state for s in manager.status() if s.name == name)


def _call(manager: McpManager, name: str, args: dict, tmp_path: Path, **ctx: object):
    tool = manager.tools()[name]
    context = ToolContext(workspace=tmp_path, capture=lambda p: None, **ctx)  # type: ignore[arg-type]
    return asyncio.run(tool.run(args, context))


def test_stdio_server_connects_in_the_background_and_serves_calls(tmp_path, pid_dir) -> None:
    manager = _manager(tmp_path, {"notes": stdio_server(env={"MCP_PID_DIR": str(pid_dir)})})
    try:
        assert _state(manager, "notes") == "connecting"  # apply returned before the server answered
        wait_until(lambda: _state(manager, "notes") == "ready", 30, "notes to be ready")
        tools = manager.tools()
        assert sorted(tools) == ["notes__big", "notes__search", "notes__slow", "notes__write_note"]
        search = tools["notes__search"]
        assert search.read_only and search.recovery == "external"
        assert search.parameters["required"] == ["query"]  # the schema passed through
        result = _call(manager, "notes__search", {"query": "otters"}, tmp_path)
        assert not result.is_error and "found 2 notes about otters" in result.content
        bounded = _call(manager, "notes__big", {"size": 200_000}, tmp_path, max_output_bytes=4000)
        assert len(bounded.content.encode()) <= 4200 and "x" * 100 in bounded.content
        wait_until(
            lambda: (
                "search called with 'otters'"
                in (tmp_path / ".logician/logs/mcp-notes.log").read_text()
            ),
            10,
            "the log",
        )
        pids = server_pids(pid_dir)
        assert pids and all(alive(p) for p in pids)
    finally:
        manager.close()
    assert not any(alive(p) for p in pids)
    assert list((tmp_path / ".logician/processes").glob("*.json")) == []


def test_a_server_slow_to_exit_is_killed_and_reaped_even_when_its_stop_gives_up_waiting(
    tmp_path, pid_dir, monkeypatch
) -> None:
    """At load a server's exit outlasts the stop's wait for its session, which then cancels the
    connection's task: the kill and the reaping of the server still finish before `close`
    returns (in stressed runs the cancel cut them short: the server ran on, and its loop's
    transport was found open later, failing another test with ResourceWarnings)."""
    from logician_kernel.mcp import _stdio, connection

    # The timings of a loaded machine, shortened: the session's end is waited for 0.1 s; the
    # server ignores its stdin's end and SIGTERM, so only the SIGKILL after 2 x 0.5 s stops it.
    monkeypatch.setattr(connection, "STOP_WAIT_SECONDS", 0.1)
    monkeypatch.setattr(_stdio, "_GRACE_SECONDS", 0.5)
    manager = _manager(
        tmp_path, {"slow": stdio_server("stubborn", env={"MCP_PID_DIR": str(pid_dir)})}
    )
    try:
        wait_until(lambda: _state(manager, "slow") == "ready", 60, "slow to be ready")
        pids = server_pids(pid_dir)
        assert pids and all(alive(p) for p in pids)
    finally:
        manager.close()
    assert not any(alive(p) for p in pids)  # killed and reaped (a zombie counts as alive)
    assert list((tmp_path / ".logician/processes").glob("*.json")) == []


def test_http_server_with_a_header_from_the_environment(tmp_path) -> None:
    with http_server({"EXPECT_TOKEN": "Bearer s3cret-token-value"}) as url:
        refused = _manager(tmp_path, {"web": {"url": url}})
        try:
            wait_until(lambda: _state(refused, "web") == "failed", 30, "web without a token")
            assert refused.status()[0].error  # refused with 401: the header is what opens it
        finally:
            refused.close()
        manager = _manager(
            tmp_path,
            {"web": {"url": url, "headers": {"Authorization": "env:WEB_TOKEN"}}},
            env={"WEB_TOKEN": "Bearer s3cret-token-value"},
        )
        try:
            wait_until(lambda: _state(manager, "web") == "ready", 30, "web to be ready")
            result = _call(manager, "web__search", {"query": "http"}, tmp_path)
            assert "found 2 notes about http" in result.content
        finally:
            manager.close()
    cached = "".join(p.read_text() for p in (tmp_path / ".logician/mcp").iterdir())
    assert "s3cret" not in cached and "env:WEB_TOKEN" not in cached  # tools only


def test_a_missing_header_variable_fails_the_server_naming_it(tmp_path) -> None:
    manager = _manager(
        tmp_path,
        {"web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "env:NOPE"}}},
    )
    try:
        wait_until(lambda: _state(manager, "web") == "failed", 10, "web to fail")
        assert "NOPE" in (manager.status()[0].error or "")
    finally:
        manager.close()


def test_hung_and_crashing_servers_fail_with_their_reason(tmp_path, pid_dir) -> None:
    env = {"MCP_PID_DIR": str(pid_dir)}
    manager = _manager(
        tmp_path,
        {
            "hung": stdio_server("hang", env=env, connect_timeout_seconds=2),
            "crash": stdio_server("crash", env=env),
            "notes": stdio_server(env=env),
        },
    )
    try:
        wait_until(lambda: _state(manager, "crash") == "failed", 30, "crash to fail")
        assert "exited" in (next(s for s in manager.status() if s.name == "crash").error or "")
        wait_until(lambda: _state(manager, "hung") == "failed", 30, "hung to time out")
        hung = next(s for s in manager.status() if s.name == "hung")
        assert hung.error == "no answer within connect_timeout_seconds=2"
        # The others are not held up: the good server gets ready whatever the hung one does
        # (waited for: its own start, an SDK import, took over 2 s at load 30).
        wait_until(lambda: _state(manager, "notes") == "ready", 60, "notes to be ready")
        assert all(name.startswith("notes__") for name in manager.tools())
    finally:
        manager.close()
    assert not any(alive(p) for p in server_pids(pid_dir))


def test_a_restart_offers_cached_tools_marked_stale_until_the_server_answers(tmp_path) -> None:
    servers = {"notes": stdio_server()}
    first = _manager(tmp_path, servers)
    wait_until(lambda: _state(first, "notes") == "ready", 30, "notes to be ready")
    first.close()
    again = _manager(tmp_path, servers)
    try:
        status = again.status()[0]
        assert status.state == "connecting" and status.stale and status.tools == 4
        assert "notes__search" in again.tools() and again.tools()["notes__search"].stale
        wait_until(lambda: _state(again, "notes") == "ready", 30, "notes to be ready")
        assert not again.status()[0].stale
    finally:
        again.close()
    # Another configuration has another hash: nothing cached for it.
    other = _manager(tmp_path, {"notes": stdio_server(allowed_tools=["search"])})
    try:
        assert other.status()[0].tools == 0
    finally:
        other.close()


def test_call_timeout_and_cancellation_stop_the_call(tmp_path) -> None:
    manager = _manager(tmp_path, {"notes": stdio_server(call_timeout_seconds=1)})
    try:
        wait_until(lambda: _state(manager, "notes") == "ready", 30, "notes to be ready")
        result = _call(manager, "notes__slow", {"seconds": 30}, tmp_path)
        assert result.is_error and "call_timeout_seconds=1" in result.content
        tool = manager.tools()["notes__slow"]
        ctx = ToolContext(workspace=tmp_path, capture=lambda p: None)

        async def cancelled() -> None:
            task = asyncio.ensure_future(tool.run({"seconds": 30}, ctx))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancelled())
        # The session still serves calls after a cancelled one.
        assert "found" in _call(manager, "notes__search", {"query": "q"}, tmp_path).content
    finally:
        manager.close()


def test_restart_reconnects_and_an_unknown_name_is_a_clear_error(tmp_path) -> None:
    manager = _manager(tmp_path, {"notes": stdio_server()})
    try:
        wait_until(lambda: _state(manager, "notes") == "ready", 30, "notes to be ready")
        manager.restart("notes")
        assert _state(manager, "notes") == "connecting"
        wait_until(lambda: _state(manager, "notes") == "ready", 30, "notes to be ready again")
        with pytest.raises(KeyError, match="the servers are: notes"):
            manager.restart("nope")
    finally:
        manager.close()


def test_a_real_server_listing_duplicates_and_130_tools(tmp_path) -> None:
    """Both `dup`s are offered (`many__dup`, `many__dup_2`, in listing order); 130 tools are
    cut to `mcp.max_tools_per_server` with a notice naming the server and the count."""
    manager = McpManager(tmp_path, {})
    manager.apply(McpSettings.model_validate({"servers": {"many": stdio_server("many")}}))
    try:
        wait_until(lambda: _state(manager, "many") == "ready", 30, "many to be ready")
        tools = manager.tools()
        assert len(tools) == 128
        assert tools["many__dup"].description.endswith("first dup")
        assert tools["many__dup_2"].description.endswith("second dup")
        status = next(s for s in manager.status() if s.name == "many")
        assert status.notice is not None and "'many'" in status.notice
        assert "130 tools" in status.notice and "first 128" in status.notice
        manager.apply(
            McpSettings.model_validate(
                {"servers": {"many": stdio_server("many")}, "max_tools_per_server": 200}
            )
        )
        assert len(manager.tools()) == 130
        assert next(s for s in manager.status() if s.name == "many").notice is None
    finally:
        manager.close()


def test_the_connect_timeout_counts_from_the_connect_not_from_the_sdks_first_import(
    tmp_path, monkeypatch
) -> None:
    """Before: the server's clock started when the configuration was applied, before the SDK's
    first import (seconds at load), and the import's time came off `connect_timeout_seconds`:
    a server that answered in time was reported as not answering. The import here takes 100 s
    of a fake clock, more than the whole timeout."""
    import types

    from logician_kernel.mcp import connection, manager

    clock = {"offset": 0.0}
    real = connection.time.monotonic
    monkeypatch.setattr(
        connection,
        "time",
        types.SimpleNamespace(
            monotonic=lambda: real() + clock["offset"], time=connection.time.time
        ),
    )
    real_import = manager._import_sdk

    def slow_import() -> bool:
        clock["offset"] += 100.0
        return real_import()

    monkeypatch.setattr(manager, "_import_sdk", slow_import)
    mgr = _manager(tmp_path, {"notes": stdio_server(connect_timeout_seconds=60)})
    try:
        wait_until(lambda: _state(mgr, "notes") != "connecting", 120, "notes to connect")
        status = next(s for s in mgr.status() if s.name == "notes")
        assert status.state == "ready", status
    finally:
        mgr.close()
