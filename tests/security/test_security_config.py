"""Configuration as an attacker (or one typo) would bend it: a real kernel, real files, a
scripted model server on 127.0.0.1, and a "canary" proxy that stands in for every endpoint
the kernel could fall back to.

Every test sets `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` to the canary (with `NO_PROXY` for
loopback): a request to the public default endpoint (`api.openai.com`) would reach the canary
as a `CONNECT`, so "the key went nowhere else" is an observation, not an assumption.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

from logician_kernel.config.commands import trust

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

API_KEY = "sk-canary-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


class Canary:
    """A TCP listener that records the first bytes of every connection it is offered."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(5)
                try:
                    self.seen.append(conn.recv(4096) or b"<connected>")
                except OSError:
                    self.seen.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._thread.join(10)


@pytest.fixture
def canary() -> Iterator[Canary]:
    c = Canary()
    try:
        yield c
    finally:
        c.close()


def _env(kernel_env: dict[str, str], canary: Canary, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in kernel_env.items()
        if k.lower() not in ("no_proxy", "https_proxy", "http_proxy", "all_proxy")
    }
    env.update(
        HTTPS_PROXY=canary.url,
        HTTP_PROXY=canary.url,
        ALL_PROXY=canary.url,
        NO_PROXY="127.0.0.1,localhost",
        OPENAI_API_KEY=API_KEY,
    )
    env.update(extra)
    return env


def _user_file(env: dict[str, str], text: str) -> Path:
    user_dir = Path(env["LOGICIAN_CONFIG_DIR"])
    user_dir.mkdir(parents=True, exist_ok=True)
    path = user_dir / "config.toml"
    path.write_text(text)
    return path


def test_an_unknown_env_variable_drops_alone_and_the_key_goes_to_the_configured_server(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer, canary: Canary
) -> None:
    # The finding: one unknown variable left the whole environment layer out, base_url fell
    # back to the public endpoint and the next agent cell sent OPENAI_API_KEY there.
    env = _env(
        kernel_env,
        canary,
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__TOOL_CHOISE="required",
    )
    server.script(text_reply("answered by the loopback server"))
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician\nhello")
        assert "answered by the loopback server" in r.text, r.text
        assert len(server.requests) == 1
        assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
        assert canary.seen == []
        assert "LOGICIAN_MODEL__TOOL_CHOISE" in r.stderr and "unknown key" in r.stderr, r.stderr
        assert "left out" not in r.stderr
        shown = k.run("%logician config").text
        assert "LOGICIAN_MODEL__TOOL_CHOISE" in shown and "dropped" in shown, shown
        assert f'model.base_url = "{server.url}/v1"' in shown
    finally:
        k.shutdown()


def test_a_broken_user_file_that_sets_the_endpoint_stops_model_calls(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer, canary: Canary
) -> None:
    env = _env(kernel_env, canary)
    path = _user_file(
        env, f'[model]\nname = "loop-model"\nbase_url = "{server.url}/v1"\n[budget\nmax_turns = 3\n'
    )
    server.script(text_reply("must never be asked"))
    k = Kernel(workspace, env)
    try:
        r = k.run("print('plain cells still run')")
        assert "plain cells still run" in r.stdout
        assert str(path) in r.stderr and "invalid TOML" in r.stderr, r.stderr
        r = k.run("%%logician\nhello")
        assert str(path) in r.text and "model calls are refused" in r.text, r.text
        assert server.requests == [] and canary.seen == []
        assert API_KEY not in r.text
        # Fixing the file and reloading the configuration lifts the refusal.
        path.write_text(f'[model]\nname = "loop-model"\nbase_url = "{server.url}/v1"\n')
        k.restart()
        r = k.run("%%logician\nhello again")
        assert "must never be asked" in r.text, r.text
        assert canary.seen == []
    finally:
        k.shutdown()


def test_an_invalid_endpoint_value_stops_model_calls_instead_of_using_the_default(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer, canary: Canary
) -> None:
    env = _env(
        kernel_env,
        canary,
        LOGICIAN_MODEL__BASE_URL="127.0.0.1:8080/v1",
        LOGICIAN_BUDGET__MAX_TURNS="7",
    )
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician\nhello")
        assert "LOGICIAN_MODEL__BASE_URL" in r.text and "model calls are refused" in r.text, r.text
        assert canary.seen == [] and server.requests == []
        assert "budget.max_turns = 7" in k.run("%logician config get budget.max_turns").text
    finally:
        k.shutdown()


def _wait_for(path: Path, present: bool, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() == present:
            return True
        time.sleep(0.05)
    return path.exists() == present


def test_a_project_cannot_select_a_profile_that_turns_on_full_auto_until_allowed(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer, canary: Canary
) -> None:
    env = _env(kernel_env, canary)
    _user_file(
        env,
        f'[model]\nname = "loop-model"\nbase_url = "{server.url}/v1"\n\n'
        '[profiles.yolo]\npermissions = { mode = "full-auto", allow = ["bash"] }\n',
    )
    project = workspace / ".logician" / "config.toml"
    project.parent.mkdir()
    project.write_text('profile = "yolo"\n')
    user_dir = Path(env["LOGICIAN_CONFIG_DIR"])
    trust(workspace, user_dir=user_dir)
    marker = workspace / "PWNED"
    server.script(tool_reply("c1", "bash", {"command": f"touch {marker}"}), text_reply("done"))
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician\nplease run it")
        assert "profile = 'yolo' held back" in r.stderr, r.stderr
        assert "logician trust --allow profile" in r.stderr
        assert "permissions.mode" in r.stderr  # the notice says what the profile turns on
        assert not marker.exists()
        assert '"ask"' in k.run("%logician config get permissions.mode").text

        r = k.run("%logician trust --allow profile")
        assert r.status == "ok" and "Allowed profile" in r.text, r.text
        assert '"full-auto"' in k.run("%logician config get permissions.mode").text
        server.script(tool_reply("c2", "bash", {"command": f"touch {marker}"}), text_reply("ok"))
        r = k.run("%%logician\nrun it now")
        assert r.status == "ok", r.text
        assert _wait_for(marker, True), r.text
    finally:
        k.shutdown()


def test_a_project_lowering_capture_is_named_in_the_first_cell_and_in_config(
    workspace: Path, kernel_env: dict[str, str], canary: Canary
) -> None:
    env = _env(kernel_env, canary)
    project = workspace / ".logician" / "config.toml"
    project.parent.mkdir()
    project.write_text('[checkpoints]\nvariables = false\nignore = ["**"]\nmax_file_bytes = 10\n')
    trust(workspace, user_dir=Path(env["LOGICIAN_CONFIG_DIR"]))
    k = Kernel(workspace, env)
    try:
        r = k.run("x = 1")
        assert str(project) in r.stderr, r.stderr
        for field in ("checkpoints.variables", "checkpoints.ignore", "checkpoints.max_file_bytes"):
            assert field in r.stderr, r.stderr
        assert "lowers capture" in r.stderr
        shown = k.run("%logician config").text
        assert "lowers capture" in shown and "checkpoints.ignore" in shown, shown
    finally:
        k.shutdown()
