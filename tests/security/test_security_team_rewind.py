"""Two real accounts on one shared folder: Alice's rewind never changes a file Bob owns, not
even with `--include-external --force` (each is listed "owned by bob ...: left alone"), and
her undo gives back only what was hers. Alice's side runs as her own account (a fresh
interpreter through the `Workspace` front door); Bob writes as his while her frame is open.

Needs root (useradd); skipped with the reason otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from local_accounts import OtherAccount

REPO = Path(__file__).resolve().parents[2]

_AS_ACCOUNT = r"""
import json, os, sys, time
from pathlib import Path
from logician_kernel.workspace import Workspace

uid, gid, config, warm, root = sys.argv[1:6]
args, root, warm = sys.argv[6:], Path(root), Path(warm)
# The interpreter lives under /root, out of other accounts' reach: a warm-up as root imports
# everything a frame, a rewind and an undo use, then the process becomes the account for good.
w = Workspace.open(warm, {"LOGICIAN_THREAD": "warm", "LOGICIAN_CONFIG_DIR": str(warm / "c")})
with w.frame(1, None, "warm-up") as f:
    (warm / "w.txt").write_text("w")
w.rewind(f.closed.frame, force=True, include_external=True)
w.undo(force=True)
w.close()
os.setgroups([])
os.setgid(int(gid))
os.setuid(int(uid))
"""
"""Each account's script starts with this: its own config directory, a warm-up, then its ids."""

_ALICE = r"""
go = Path(args[0])
ws = Workspace.open(root, {"LOGICIAN_THREAD": "alice", "LOGICIAN_CONFIG_DIR": config})
with ws.frame(1, None, "alice's cell") as frame:
    (root / "alice.txt").write_text("alice")
    with open(root / "bob.txt", "a") as fh:  # Bob's file is group-writable: she can
        fh.write("alice was here\n")
    print("in-frame", flush=True)
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
rewound = ws.rewind(frame.closed.frame, force=True, include_external=True)
after_rewind = {p: (root / p).exists() for p in ("alice.txt", "bob.txt", "bob-new.txt")}
undone = ws.undo(force=True)
ws.close()
print(json.dumps({
    "rewind": [[p.path, p.action, p.detail] for p in rewound.paths],
    "undo": [[p.path, p.action, p.detail] for p in undone.paths],
    "after_rewind": after_rewind,
}))
"""


_BOB = r"""
ws = Workspace.open(root, {"LOGICIAN_THREAD": "bob", "LOGICIAN_CONFIG_DIR": config})
print("\n".join(n.text for n in ws.notices.all()))
print("frames:", ws.checkpoints_if_on is not None)
ws.close()
"""


def _start(
    account: OtherAccount, team: Path, shared: Path, script: str, *args: str
) -> subprocess.Popen[str]:
    """Run `script` (after `_AS_ACCOUNT`) as `account` in `team`, with a config directory
    and a warm-up folder of its own in `shared`."""
    config = shared / f"{account.name}-config"
    config.mkdir()
    os.chown(config, account.uid, account.gid)
    warm = shared / f"{account.name}-warm"
    warm.mkdir()
    path = shared / f"{account.name}.py"
    path.write_text(_AS_ACCOUNT + script)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(config),
        "PYTHONPATH": str(REPO),
    }
    ids = [str(account.uid), str(account.gid), str(config), str(warm), str(team)]
    return subprocess.Popen(
        [sys.executable, str(path), *ids, *args],
        cwd=team,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(account: OtherAccount, team: Path, shared: Path, script: str, *args: str) -> str:
    """`_start` to the end: its output (it must exit 0)."""
    proc = _start(account, team, shared, script, *args)
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return out


def test_alices_rewind_never_touches_bobs_files(
    other_account: OtherAccount, second_account: OtherAccount, shared_dir: Path
) -> None:
    alice, bob = other_account, second_account
    team = shared_dir / "team"
    team.mkdir()
    team.chmod(0o1777)  # a shared folder: anyone may add files, sticky like /tmp
    bob.run(["sh", "-c", "echo bob > bob.txt && chmod 666 bob.txt"], cwd=team)
    go = shared_dir / "go"
    proc = _start(alice, team, shared_dir, _ALICE, str(go))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "in-frame", line + proc.stderr.read()  # type: ignore[union-attr]
        # While Alice's cell runs, Bob edits his file and adds one: changes outside her kernel.
        bob.run(["sh", "-c", "echo 'bob again' >> bob.txt && echo new > bob-new.txt"], cwd=team)
        go.write_text("go")
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    rewind = {path: (action, detail) for path, action, detail in report["rewind"]}
    assert rewind["alice.txt"][0] == "deleted"
    for path in ("bob.txt", "bob-new.txt"):
        action, detail = rewind[path]
        assert action == "conflict" and f"owned by {bob.name}" in detail, report
        assert "left alone" in detail
    assert report["after_rewind"] == {"alice.txt": False, "bob.txt": True, "bob-new.txt": True}
    # Bob's work is as he left it (Alice's own append to his file stays too: never reverted
    # by her, since it is his file), and his files are still his.
    assert (team / "bob.txt").read_text() == "bob\nalice was here\nbob again\n"
    assert (team / "bob-new.txt").read_text() == "new\n"
    assert (team / "bob.txt").stat().st_uid == bob.uid
    assert (team / "bob-new.txt").stat().st_uid == bob.uid
    # Her undo gives back her own file, hers; Bob's stay his.
    undo = {path: action for path, action, _ in report["undo"]}
    assert undo.get("alice.txt") in ("recreated", "restored"), report
    assert (team / "alice.txt").read_text() == "alice"
    assert (team / "alice.txt").stat().st_uid == alice.uid
    assert (team / "bob.txt").stat().st_uid == bob.uid
    assert (team / "bob.txt").read_text() == "bob\nalice was here\nbob again\n"

    # Bob opening the same folder is told whose `.logician/` it is; his cells run with frames
    # off (Alice's `.logician/` is private, not shared for the team: docs/deploy.md).
    said = _run(bob, team, shared_dir, _BOB)
    assert "frames: False" in said
    assert f"{team / '.logician'} is owned by {alice.name} (uid {alice.uid}), not by you" in said
    # Her private project config is said to be unreadable, as it is, never "not trusted".
    assert "config.toml: cannot read: Permission denied" in said and "not trusted" not in said


_MEMBER = r"""
name = args[0]
ws = Workspace.open(root, {"LOGICIAN_THREAD": "nb", "LOGICIAN_CONFIG_DIR": config})
notices = [n.text for n in ws.notices.all()]
with ws.frame(1, None, name + "'s cell") as frame:
    (root / f"{name}.txt").write_text(name)
closed = frame.closed
rewound = ws.rewind(closed.frame, force=True, include_external=True) if closed else None
with ws.frame(2, None, name + "'s second cell"):
    (root / f"{name}-kept.txt").write_text(name)
ws.close()
print(json.dumps({
    "notices": notices,
    "frame": closed.frame if closed else None,
    "rewound": [[p.path, p.action, p.detail] for p in rewound.paths] if rewound else None,
}))
"""


def _as_member(account: OtherAccount, team: Path, shared: Path) -> dict:
    out = _run(account, team, shared, _MEMBER, account.name)
    return json.loads(out.strip().splitlines()[-1])


def test_every_member_of_a_team_folder_gets_frames_of_their_own(
    other_account: OtherAccount, second_account: OtherAccount, shared_dir: Path
) -> None:
    alice, bob = other_account, second_account
    team = shared_dir / "team"
    team.mkdir()
    team.chmod(0o1777)
    # The admin (root here) shares the state directory: sticky, writable by the team.
    (team / ".logician").mkdir()
    (team / ".logician").chmod(0o1777)
    (team / ".logician" / "users").mkdir()
    (team / ".logician" / "users").chmod(0o1777)
    seen = {a.name: _as_member(a, team, shared_dir) for a in (alice, bob)}
    for account in (alice, bob):
        report = seen[account.name]
        assert not any("frames are off" in n for n in report["notices"]), report
        assert report["frame"] == 1
        assert [r[:2] for r in report["rewound"]] == [[f"{account.name}.txt", "deleted"]], report
        state = team / ".logician" / "users" / str(account.uid)
        assert state.stat().st_uid == account.uid and state.stat().st_mode & 0o777 == 0o700
        assert (state / "threads" / "nb.jsonl").is_file()
        # Each member's second frame stands, and nobody's rewind touched the other's file.
        assert (team / f"{account.name}-kept.txt").read_text() == account.name
        assert (team / f"{account.name}-kept.txt").stat().st_uid == account.uid
    assert not (team / ".logician" / "threads").exists()  # nothing in the shared level


def test_a_single_users_state_made_shared_later_stays_theirs(
    other_account: OtherAccount, second_account: OtherAccount, shared_dir: Path
) -> None:
    alice, bob = other_account, second_account
    team = shared_dir / "team"
    team.mkdir()
    team.chmod(0o1777)
    first = _as_member(alice, team, shared_dir)  # Alice alone: .logician/ is hers
    assert first["frame"] == 1 and (team / ".logician" / "threads" / "nb.jsonl").is_file()
    # Alice shares it with the team (sticky, writable); her next kernel keeps her layout and
    # makes users/ for the others.
    alice.run(["chmod", "1777", ".logician"], cwd=team)
    shutil.rmtree(shared_dir / f"{alice.name}-config")
    shutil.rmtree(shared_dir / f"{alice.name}-warm")
    again = _as_member(alice, team, shared_dir)
    assert not any("frames are off" in n for n in again["notices"]), again
    assert again["frame"] == 3  # her earlier frames are still hers (1 rewound, 2 kept)
    users = team / ".logician" / "users"
    assert users.stat().st_uid == alice.uid and users.stat().st_mode & 0o1000
    second = _as_member(bob, team, shared_dir)
    assert not any("frames are off" in n for n in second["notices"]), second
    assert second["frame"] == 1
    assert (users / str(bob.uid) / "threads" / "nb.jsonl").is_file()
