"""The stored keys of *Connect a model*: a 0600 file in the user config dir, written
atomically, never through a symlink, never inside the workspace; a profile names a key by
`model.key_name` and the key is sent from there, shown only masked."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import logician_kernel.config._atomic as atomic
from logician_kernel.config import ConfigError, config_show, masked_key, store_key
from logician_kernel.config.commands import save_profile

KEY = "sk-test-0123456789abcdef"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_stored_key_is_a_0600_file_whatever_the_umask(sandbox: Any) -> None:
    old = os.umask(0)
    try:
        path = store_key(sandbox.user_dir, "loop", KEY, workspace=sandbox.ws)
    finally:
        os.umask(old)
    assert path == sandbox.user_dir / "credentials.json"
    assert mode(path) == 0o600
    assert json.loads(path.read_text())["keys"] == {"loop": KEY}
    store_key(sandbox.user_dir, "other", "sk-other-0123456789", workspace=sandbox.ws)
    assert set(json.loads(path.read_text())["keys"]) == {"loop", "other"}  # kept, not replaced
    assert mode(path) == 0o600


def test_a_writer_that_dies_before_the_rename_leaves_the_old_keys(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store_key(sandbox.user_dir, "loop", KEY, workspace=sandbox.ws)
    before = path.read_bytes()

    def dies(src: object, dst: object) -> None:
        raise OSError("killed before the rename")

    monkeypatch.setattr(atomic, "durable_replace", dies)
    with pytest.raises(OSError, match="killed"):
        store_key(sandbox.user_dir, "loop", "sk-new-0123456789abc", workspace=sandbox.ws)
    assert path.read_bytes() == before
    monkeypatch.undo()
    store_key(sandbox.user_dir, "loop", "sk-new-0123456789abc", workspace=sandbox.ws)
    assert json.loads(path.read_text())["keys"] == {"loop": "sk-new-0123456789abc"}


@pytest.mark.parametrize("at", ["credentials.json", ".credentials.json.tmp"])
def test_a_symlink_at_the_files_path_is_refused_never_followed(
    sandbox: Any, tmp_path: Path, at: str
) -> None:
    sandbox.user_dir.mkdir(parents=True)
    bait = tmp_path / "elsewhere.json"
    bait.write_text('{"keys": {}}')
    (sandbox.user_dir / at).symlink_to(bait)
    with pytest.raises(ConfigError, match="symlink"):
        store_key(sandbox.user_dir, "loop", KEY, workspace=sandbox.ws)
    assert KEY not in bait.read_text()
    assert bait.read_text() == '{"keys": {}}'


def test_a_symlinked_file_is_not_read_and_is_said(sandbox: Any, tmp_path: Path) -> None:
    sandbox.user_dir.mkdir(parents=True)
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"keys": {"loop": "sk-planted-0123456789"}}))
    (sandbox.user_dir / "credentials.json").symlink_to(planted)
    sandbox.write_user('[model]\nkey_name = "loop"\napi_key_env = ""\n')
    cfg = sandbox.load()
    assert cfg.api_key() is None
    assert any("symlink" in n for n in cfg.notices)


def test_a_store_inside_the_workspace_is_refused(sandbox: Any) -> None:
    inside = sandbox.ws / "conf"
    with pytest.raises(ConfigError, match="inside the workspace"):
        store_key(inside, "loop", KEY, workspace=sandbox.ws)
    assert not (inside / "credentials.json").exists()


def test_bad_names_and_keys_are_refused_naming_the_field(sandbox: Any) -> None:
    with pytest.raises(ConfigError, match="^name: "):
        store_key(sandbox.user_dir, "a b", KEY, workspace=sandbox.ws)
    with pytest.raises(ConfigError, match="^api_key: ") as caught:
        store_key(sandbox.user_dir, "ok", "sk-has a space", workspace=sandbox.ws)
    assert "has a space" not in str(caught.value)


def test_a_profile_refers_to_the_stored_key_which_is_sent_and_shown_masked(
    sandbox: Any,
) -> None:
    store_key(sandbox.user_dir, "loop", KEY, workspace=sandbox.ws)
    cfg, said = save_profile(
        sandbox.load(),
        "loop",
        {
            "provider": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "",
            "key_name": "loop",
        },
    )
    assert "Saved profiles.loop.model" in said and KEY not in said
    text = sandbox.user_file.read_text()
    assert 'key_name = "loop"' in text and KEY not in text
    cfg = sandbox.load(session={"profile": "loop"})
    assert cfg.api_key() is not None and cfg.api_key().get_secret_value() == KEY
    shown = config_show(cfg)
    assert KEY not in shown and "stored key 'loop'" in shown
    assert 'profiles.loop.model.api_key_env = ""' in shown  # a variable's name, not masked
    assert KEY not in config_show(cfg, as_json=True)
    assert masked_key(KEY) == "sk-…cdef" and masked_key("short") == "****"


def test_a_project_file_cannot_choose_the_stored_key(sandbox: Any) -> None:
    store_key(sandbox.user_dir, "mine", KEY, workspace=sandbox.ws)
    sandbox.write_project('[model]\nkey_name = "mine"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.model.key_name == ""
    assert "model.key_name" in cfg.held_back
