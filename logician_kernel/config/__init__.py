"""Configuration: one validated, immutable snapshot per load.

Layers, lowest to highest: built-in defaults < user file (`<user config dir>/config.toml`) <
project file `<workspace>/.logician/config.toml` (trusted workspaces only) < the selected
profile (`[profiles.NAME]`, `_profiles.py`) < `LOGICIAN_<SECTION>__<KEY>` environment variables
< session overrides. They are merged once as plain dicts and validated
once; every subsystem receives the resulting `EffectiveConfig` and never reads a config file
or the environment itself. Only explicit user changes persist, one field at a time,
atomically. Keys stored with *Connect a model* live apart, in `<user config
dir>/credentials.json` (`_credentials.py`, 0600), which a profile names by `model.key_name`.
This package never imports IPython, ipykernel, ipywidgets or comm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._credentials import masked_key, store_key
    from ._effective import EffectiveConfig, load_effective_config, user_config_dir
    from ._errors import ConfigError
    from ._keys import command_line_value, parse_key
    from ._mcp_schema import McpServerSettings, McpSettings
    from ._schema import (
        BudgetSettings,
        CheckpointSettings,
        CompactionSettings,
        LogicianSettings,
        ModelPrice,
        ModelSettings,
        PermissionSettings,
        UiSettings,
        WorkspaceSettings,
    )
    from ._sources import LayerName
    from .commands import (
        config_get,
        config_schema,
        config_set,
        config_show,
        config_unset,
        is_trusted,
        save_profile,
        trust,
        untrust,
    )

__all__ = [
    "BudgetSettings",
    "CheckpointSettings",
    "CompactionSettings",
    "ConfigError",
    "EffectiveConfig",
    "LayerName",
    "LogicianSettings",
    "McpServerSettings",
    "McpSettings",
    "ModelPrice",
    "ModelSettings",
    "PermissionSettings",
    "UiSettings",
    "WorkspaceSettings",
    "command_line_value",
    "config_get",
    "config_schema",
    "config_set",
    "config_show",
    "config_unset",
    "is_trusted",
    "load_effective_config",
    "masked_key",
    "parse_key",
    "save_profile",
    "store_key",
    "trust",
    "untrust",
    "user_config_dir",
]


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)
