"""Two people, two real kernels, one team folder: Alice and Bob (made with useradd here,
removed after) each run a Logician kernel as themselves on one group-writable folder. Both get
frames of their own; neither's rewind touches the other's files, with and without
`--include-external --force` (each is listed "owned by bob ...: left alone"); the undo gives
back what the rewind took, with the owner it had.

Needs root (useradd, groupadd, setpriv); skipped with the reason otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Kernel, clean_env
from local_accounts import OtherAccount, account_kernel


@pytest.fixture
def team_group() -> Iterator[int]:
    """A throwaway group both members belong to (as their kernels' one supplementary group)."""
    groupadd, groupdel = shutil.which("groupadd"), shutil.which("groupdel")
    if os.geteuid() != 0 or groupadd is None or groupdel is None or not shutil.which("setpriv"):
        pytest.skip("kernels as two accounts need root with groupadd and setpriv")
    name = f"lkg{uuid.uuid4().hex[:10]}"
    subprocess.run([groupadd, name], check=True, capture_output=True, timeout=60)
    try:
        import grp

        yield grp.getgrnam(name).gr_gid
    finally:
        subprocess.run([groupdel, name], check=False, capture_output=True, timeout=60)


def _team_folder(base: Path, gid: int) -> Path:
    """The project folder and its shared state, set up by the admin as docs/deploy.md says."""
    team = base / "team"
    for path in (team, team / ".logician", team / ".logician" / "users"):
        path.mkdir()
        os.chown(path, 0, gid)
        path.chmod(0o3775 if path == team else 0o3770)
    return team


def _member(account: OtherAccount, team: Path, base: Path, gid: int) -> Kernel:
    home = base / f"{account.name}-home"
    home.mkdir()
    os.chown(home, account.uid, account.gid)
    env = clean_env(LOGICIAN_THREAD="nb", LOGICIAN_CONFIG_DIR=str(home / "config"), HOME=str(home))
    return account_kernel(account, team, env, groups=(gid,))


def _frames(kernel: Kernel) -> str:
    return kernel.run("%logician frames").text


def _listed(text: str, path: str) -> str:
    return next((line for line in text.splitlines() if path in line), "")


def test_two_members_kernels_each_get_frames_and_never_rewind_each_others_files(
    other_account: OtherAccount, second_account: OtherAccount, shared_dir: Path, team_group: int
) -> None:
    alice, bob = other_account, second_account
    team = _team_folder(shared_dir, team_group)
    ka = _member(alice, team, shared_dir, team_group)
    try:
        kb = _member(bob, team, shared_dir, team_group)
        try:
            whoami = "import os; print(os.geteuid())"
            assert ka.run(whoami).stdout.strip() == str(alice.uid)
            assert kb.run(whoami).stdout.strip() == str(bob.uid)
            # Bob's file, group-writable: Alice's cell may append to it.
            r = kb.run(
                "open('bob.txt', 'w').write('bob\\n'); import os; os.chmod('bob.txt', 0o664)"
            )
            assert r.status == "ok", r.text
            # Alice's cell makes a file, appends to Bob's, and waits while Bob adds one.
            go = shared_dir / "go"
            msg = ka.send(
                "import os, time\n"
                "open('alice.txt', 'w').write('alice\\n'); os.chmod('alice.txt', 0o640)\n"
                "open('bob.txt', 'a').write('alice was here\\n')\n"
                "print('in-frame', flush=True)\n"
                f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
            )
            ka.wait_for_output("in-frame", timeout=120)
            r = kb.run("open('bob-new.txt', 'w').write('new\\n')")
            assert r.status == "ok", r.text
            go.write_text("go")
            assert ka.collect(msg, timeout=120).status == "ok"

            for account, kernel in ((alice, ka), (bob, kb)):
                listing = _frames(kernel)
                assert "frames are off" not in listing, listing
                state = team / ".logician" / "users" / str(account.uid)
                assert state.stat().st_uid == account.uid
                assert state.stat().st_mode & 0o777 == 0o700
                assert (state / "threads" / "nb.jsonl").is_file()
            # Each has frames of their own: Alice's cell is her frame 2, Bob's two cells his 2, 3.
            assert _listed(_frames(ka), "import os, time").split()[:2] == ["2", "In"]
            assert _listed(_frames(kb), "bob-new.txt").split()[:1] == ["3"]
            alice_frame = "2"

            def bobs_files_as_he_left_them() -> None:
                assert (team / "bob.txt").read_text() == "bob\nalice was here\n"
                assert (team / "bob-new.txt").read_text() == "new\n"
                for name in ("bob.txt", "bob-new.txt"):
                    assert (team / name).stat().st_uid == bob.uid

            for flags in ("", " --include-external --force"):
                said = ka.run(f"%logician rewind {alice_frame}{flags}")
                assert said.status == "ok", said.text
                assert not (team / "alice.txt").exists(), said.text
                bobs_files_as_he_left_them()
                # Bob's file the cell appended to is his: listed and left alone, by name.
                line = _listed(said.text, "bob.txt")
                assert f"owned by {bob.name}" in line and "left alone" in line, said.text
                if flags:
                    line = _listed(said.text, "bob-new.txt")
                    assert f"owned by {bob.name}" in line and "left alone" in line, said.text
                undone = ka.run("%logician undo")
                assert undone.status == "ok", undone.text
                # Her file back, hers, with its mode; Bob's untouched.
                st = (team / "alice.txt").stat()
                assert (st.st_uid, st.st_mode & 0o777) == (alice.uid, 0o640)
                assert (team / "alice.txt").read_text() == "alice\n"
                bobs_files_as_he_left_them()
            # Bob's own frames never moved.
            assert "bob.txt" in _frames(kb)
        finally:
            kb.shutdown()
    finally:
        ka.shutdown()


def test_a_root_kernels_undo_gives_files_back_to_their_owners(
    other_account: OtherAccount, shared_dir: Path
) -> None:
    """A root kernel (a container on host files) may rewind anyone's files; its undo recreates
    a file the rewind deleted with the owner, group and mode it had, never as root's."""
    bob = other_account
    ws = shared_dir / "host"
    ws.mkdir()
    (ws / "bob.txt").write_text("bob\n")
    os.chown(ws / "bob.txt", bob.uid, bob.gid)
    k = Kernel(ws, clean_env(LOGICIAN_THREAD="root", LOGICIAN_CONFIG_DIR=str(shared_dir / "c")))
    try:
        r = k.run(
            "import os\n"
            "open('bob.txt', 'a').write('root\\n')\n"
            "open('handed.txt', 'w').write('for bob\\n')\n"
            f"os.chown('handed.txt', {bob.uid}, {bob.gid}); os.chmod('handed.txt', 0o640)\n"
        )
        assert r.status == "ok", r.text
        said = k.run("%logician rewind 1")
        assert said.status == "ok", said.text
        assert not (ws / "handed.txt").exists()
        assert (ws / "bob.txt").read_text() == "bob\n" and (ws / "bob.txt").stat().st_uid == bob.uid
        undone = k.run("%logician undo")
        assert undone.status == "ok", undone.text
        st = (ws / "handed.txt").stat()
        assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (bob.uid, bob.gid, 0o640)
        assert (ws / "bob.txt").read_text() == "bob\nroot\n" and (
            ws / "bob.txt"
        ).stat().st_uid == bob.uid
    finally:
        k.shutdown()
