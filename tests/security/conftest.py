"""Attack tests: each module plays one attacker against a real kernel and real files.

An attacker here is whoever can write the workspace (a shipped `.logician/`, a shared folder,
a prompt injection that the model repeats); each test asserts what the person who opens the
workspace would notice: the marker file never appears, no file outside changes, the planted
value is refused by name.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_accounts import OtherAccount


def _account() -> Iterator[OtherAccount]:
    """A throwaway local account made with `useradd`, removed after the test (even when it
    fails). Needs root; skipped with the reason otherwise."""
    if os.geteuid() != 0:
        pytest.skip("a second local account needs root (useradd): run the suite as root")
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if useradd is None or userdel is None:
        pytest.skip("a second local account needs useradd/userdel, not found on PATH")
    name = f"lkt{uuid.uuid4().hex[:10]}"
    subprocess.run(
        [useradd, "--no-create-home", "--user-group", "--shell", "/bin/sh", name],
        check=True,
        capture_output=True,
        timeout=60,
    )
    try:
        entry = pwd.getpwnam(name)
        yield OtherAccount(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run([userdel, name], check=False, capture_output=True, timeout=60)
        groupdel = shutil.which("groupdel")
        if groupdel is not None:  # --user-group made one; userdel removes it on most systems
            subprocess.run([groupdel, name], check=False, capture_output=True, timeout=60)


@pytest.fixture
def other_account() -> Iterator[OtherAccount]:
    """A second local account (another person on this machine); see `_account`."""
    yield from _account()


@pytest.fixture
def second_account() -> Iterator[OtherAccount]:
    """A third local account, for tests with two people besides the runner."""
    yield from _account()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every local account can reach (pytest's tmp_path is 0700, root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="lk-shared-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
