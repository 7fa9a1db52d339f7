"""Every durable write, failed in turn (issue 28): one real kernel per scenario walks N over
the scenario's durable writes, fsyncs and renames, making the Nth fail with ENOSPC (the
test-only `LOGICIAN_TEST_FAULT` hook; `LOGICIAN_TEST_FAULT_LOG` says whether the Nth was
reached, which ends the walk). For each N: the failure is said in plain words, the next cell
is a frame, and the workspace is what the ledger says (a rewind or undo is either done, or
pending and then completed by its resume, or never started); after the walk a restart finds
the ledger whole and every frame recorded so far."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

from logician_kernel.durable.test_hooks import FAULT, FAULT_LOG

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

OPS = ("write", "fsync", "rename")
MAX_N = 8
"""Writes walked per op: past the scenario's own (the walk stops there) or this many."""
FAILED_WORDS = (
    "No space left on device",
    "not captured",
    "could not be",
    "incomplete",
    "not a frame",
    "interrupted",
)


def _frames(k: Kernel) -> dict[int, str]:
    listing = k.run("%logician frames --all").text
    return {
        int(line.split()[0]): line
        for line in listing.splitlines()[1:]
        if line.split()[:1] and line.split()[0].isdigit()
    }


def _last_frame(k: Kernel) -> int:
    return max(_frames(k), default=0)


@dataclass
class Walk:
    """One scenario's kernel, the fault log, and the probe cells every step leaves."""

    k: Kernel
    ws: Path
    log: Path
    probes: list[str]
    target: int = 0
    """The frame a rewind or undo step is about."""
    server: LoopbackServer | None = None
    """The scripted model of the agent scenario."""

    def arm(self, spec: str | None) -> None:
        if spec is None:
            code = f"import os; os.environ.pop({FAULT!r}, None)"
        else:
            self.log.write_text("")
            code = (
                f"import os; os.environ[{FAULT_LOG!r}] = {str(self.log)!r}; "
                f"os.environ[{FAULT!r}] = {spec!r}"
            )
        assert self.k.run(code, silent=True).status == "ok"

    def fired(self) -> bool:
        return bool(self.log.read_text().strip())

    def probe(self, tag: str) -> str:
        """The next cell is a frame (after the failure was healed): what it said."""
        code = f"# probe {tag}\nopen('probe.txt', 'w').write({tag!r})"  # the listed first line
        r = self.k.run(code)
        assert r.status == "ok", r.text
        frames = _frames(self.k)
        assert any(f"# probe {tag}" in line for line in frames.values()), (tag, frames)
        assert not [line for line in frames.values() if "running" in line], frames
        self.probes.append(tag)
        return r.text


Step = Callable[[Walk, str], str]
"""Runs one faulted step (the fault is armed around it); returns what the cells said."""
Check = Callable[[Walk, str], None]
"""Makes the workspace and the ledger agree after the step (resuming what is pending)."""


def _plain(w: Walk, tag: str) -> str:
    return w.k.run(f"open('plain.txt', 'w').write({tag!r})").text


def _prepare_rewind(w: Walk, tag: str) -> None:
    assert w.k.run(f"open('r.txt', 'w').write({tag!r})").status == "ok"


def _rewind(w: Walk, tag: str) -> str:
    w.target = _last_frame(w.k)
    return w.k.run(f"%logician rewind {w.target}").text


def _rewind_check(w: Walk, tag: str) -> None:
    target = w.target
    line = _frames(w.k)[target]
    if "rewound" not in line:
        r = w.k.run("%logician rewind --resume")
        if "nothing to resume" in r.text:  # the plan never reached the ledger: not started
            assert (w.ws / "r.txt").read_text() == tag, r.text
            return
        assert r.status == "ok" and "incomplete" not in r.text, r.text
    assert "rewound" in _frames(w.k)[target]
    assert (w.ws / "r.txt").read_text() != tag  # back to what stood before the frame


def _prepare_undo(w: Walk, tag: str) -> None:
    assert w.k.run(f"open('u.txt', 'w').write({tag!r})").status == "ok"
    w.target = _last_frame(w.k)
    assert w.k.run("%logician rewind --last").status == "ok"


def _undo(w: Walk, tag: str) -> str:
    return w.k.run("%logician undo").text


def _undo_check(w: Walk, tag: str) -> None:
    target = w.target
    if "rewound" in _frames(w.k)[target]:
        r = w.k.run("%logician undo")  # finishes an interrupted or incomplete undo, or redoes it
        assert r.status == "ok", r.text
    assert "rewound" not in _frames(w.k)[target]
    assert (w.ws / "u.txt").read_text() == tag


def _prepare_resume(w: Walk, tag: str) -> None:
    """A rewind left incomplete: a directory with a file stands where it must delete a file."""
    assert w.k.run(f"open('res.txt', 'w').write({tag!r})").status == "ok"
    w.target = _last_frame(w.k)
    (w.ws / "res.txt").unlink()
    (w.ws / "res.txt").mkdir()
    (w.ws / "res.txt" / "inside").write_text("x")
    r = w.k.run(f"%logician rewind {w.target} --force")
    assert "rewind incomplete: 1 path(s) failed" in r.text, r.text
    (w.ws / "res.txt" / "inside").unlink()  # the cause fixed: the resume can finish
    (w.ws / "res.txt").rmdir()


def _resume(w: Walk, tag: str) -> str:
    return w.k.run("%logician rewind --resume").text


def _resume_check(w: Walk, tag: str) -> None:
    if "rewound" not in _frames(w.k)[w.target]:
        r = w.k.run("%logician rewind --resume")
        assert r.status == "ok" and "incomplete" not in r.text, r.text
    assert "rewound" in _frames(w.k)[w.target]
    assert not (w.ws / "res.txt").exists()


def _agent(w: Walk, tag: str) -> str:
    assert w.server is not None
    w.server.clear()
    w.server.script(
        tool_reply(f"c-{tag}", "write", {"path": "agent.txt", "content": tag}),
        text_reply("Wrote agent.txt."),
    )
    return w.k.run("%%logician\nWrite agent.txt.").text


def _agent_check(w: Walk, tag: str) -> None:
    r = w.k.run("%logician status")
    assert r.status == "ok", r.text
    if (w.ws / "agent.txt").exists() and (w.ws / "agent.txt").read_text() == tag:
        # The write happened: some frame records it, or the cell said it was not a frame.
        diff = w.k.run("%logician diff --last").text
        assert "agent.txt" in diff or "probe.txt" in diff, diff


def _variables(w: Walk, tag: str) -> str:
    return w.k.run(f"value_{tag.replace('-', '_')} = bytearray(300_000)").text


def _variables_check(w: Walk, tag: str) -> None:
    r = w.k.run("%logician vars --last")
    assert r.status == "ok", r.text


def _large(w: Walk, tag: str) -> str:
    said = w.k.run(f"open('big-{tag}.bin', 'wb').write(bytes([{len(w.probes) % 250}]) * 300_000)")
    return said.text + w.k.run("%logician storage").text  # waits for the background copy


def _large_captured(w: Walk, tag: str) -> bool:
    """Whether the big file of step `tag` was captured whole (a retry can absorb a fault)."""
    frame = next((n for n, line in _frames(w.k).items() if f"big-{tag}.bin" in line), None)
    return frame is not None and "not captured" not in w.k.run(f"%logician diff {frame}").text


def _storage_check(w: Walk, tag: str) -> None:
    for cmd in ("%logician storage", "%logician gc"):
        r = w.k.run(cmd)
        assert r.status == "ok" and "Traceback" not in r.text, r.text


def _gc(w: Walk, tag: str) -> str:
    return w.k.run("%logician gc --keep 0").text


def _config(w: Walk, tag: str) -> str:
    return w.k.run(
        f"%logician config set checkpoints.keep_recent_frames {20 + len(w.probes)} --persist user"
    ).text


def _config_check(w: Walk, tag: str) -> None:
    user = Path(w.k.env["LOGICIAN_CONFIG_DIR"]) / "config.toml"
    if user.exists():  # never a half-written file: the old one or the new one, whole
        tomllib.loads(user.read_text())


@dataclass
class Scenario:
    step: Step
    check: Check | None = None
    prepare: Callable[[Walk, str], None] | None = None
    absorbed: Callable[[Walk, str], bool] | None = None
    """Whether the step's effect happened whole although its fault fired (a retry took it):
    then nothing failed and nothing needs saying."""


SCENARIOS = {
    "plain-cell": Scenario(_plain),
    "rewind": Scenario(_rewind, _rewind_check, _prepare_rewind),
    "resume": Scenario(_resume, _resume_check, _prepare_resume),
    "agent-cell-write": Scenario(_agent, _agent_check),
    "undo": Scenario(_undo, _undo_check, _prepare_undo),
    "variable-capture": Scenario(_variables, _variables_check),
    "large-file-capture": Scenario(_large, _storage_check, absorbed=_large_captured),
    "gc": Scenario(_gc, _storage_check, lambda w, tag: _large(w, tag) and None),
    "config-set-persist": Scenario(_config, _config_check),
}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_durable_write_of_a_scenario_fails_in_turn_and_nothing_is_lost(
    name: str,
    workspace: Path,
    kernel_env: dict[str, str],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    scenario = SCENARIOS[name]
    server = None
    if name == "agent-cell-write":
        server = request.getfixturevalue("server")
        kernel_env = dict(request.getfixturevalue("agent_env"))
    config = Path(kernel_env["LOGICIAN_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    # Files over 200 kB go to the large-file store, whatever the free space of the test disk.
    (config / "config.toml").write_text(
        "[checkpoints]\nlarge_file_bytes = 200000\nmin_free_bytes = 0\n"
    )
    w = Walk(Kernel(workspace, kernel_env), workspace, tmp_path / "faults.log", [], server=server)
    walked = 0
    try:
        for op in OPS:
            for n in range(1, MAX_N + 1):
                tag = f"{op}-{n}"
                if scenario.prepare is not None:
                    scenario.prepare(w, tag)
                w.arm(f"{op}:{n}:ENOSPC")
                said = scenario.step(w, tag)
                w.arm(None)
                fired = w.fired()
                said += w.probe(tag)  # heals first if needed, and says so
                if not fired:
                    break  # the step has fewer than n such operations: this op is walked
                walked += 1
                absorbed = scenario.absorbed is not None and scenario.absorbed(w, tag)
                assert absorbed or [word for word in FAILED_WORDS if word in said], (tag, said)
                if scenario.check is not None:
                    scenario.check(w, tag)
        w.k.restart()
        check = w.k.run("%logician ledger").text
        assert "no damage found" in check, check
        frames = _frames(w.k)
        for tag in w.probes:  # no complete record lost
            assert any(f"# probe {tag}" in line for line in frames.values()), (tag, frames)
        assert not [line for line in frames.values() if "running" in line], frames
        w.probe("after-restart")
    finally:
        w.k.shutdown()
    if name != "gc":  # gc writes nothing durable of its own: its walk is the check above
        assert walked, f"{name}: no durable operation was reached; the hook is not wired"
