"""Where an account's state lives: `.logician/` itself, unless another account shares it with
a team (sticky, writable by the team): then `.logician/users/<uid>/`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.durable.state_dir import state_path, workspace_of
from logician_kernel.snapshots.state_trust import UntrustedStateError, check_state_dir


def test_a_missing_or_own_state_dir_is_the_state(tmp_path: Path) -> None:
    base = tmp_path / ".logician"
    assert state_path(tmp_path) == base
    base.mkdir(mode=0o700)
    assert state_path(tmp_path) == base
    base.chmod(0o1777)  # shared by its owner: the owner keeps the layout it had
    assert state_path(tmp_path) == base
    assert workspace_of(base) == tmp_path


def test_a_team_members_state_is_their_own_directory_under_users(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving .logician/ another owner needs root")
    base = tmp_path / ".logician"
    base.mkdir()
    os.chown(base, 4242, 4242)
    base.chmod(0o700)
    assert state_path(tmp_path) == base  # another's private one: refused by the trust check
    base.chmod(0o3770)  # the admin shares it with the group: sticky, group-writable
    mine = base / "users" / str(os.geteuid())
    assert state_path(tmp_path) == mine
    assert workspace_of(mine) == tmp_path
    users = base / "users"
    users.mkdir()
    os.chown(users, 4242, 4242)
    users.chmod(0o1777)
    mine.mkdir(mode=0o700)
    check_state_dir(tmp_path, mine)
    users.chmod(0o777)  # any member could rename another's state away
    with pytest.raises(UntrustedStateError, match="without the sticky bit"):
        check_state_dir(tmp_path, mine)
    users.chmod(0o1777)
    os.chown(users, 4343, 4343)  # a member made users/: they could replace the others' state
    with pytest.raises(UntrustedStateError, match="not by root or uid 4242"):
        check_state_dir(tmp_path, mine)
