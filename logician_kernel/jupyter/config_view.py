"""The sidebar's *Effective configuration* over the `logician` comm: `config.show` (every key,
its value with secrets masked, the layer that set it and where, and the same problems
`%logician config` shows, from the same `config_show`) and `config.set` (`config set KEY
VALUE` for this session, or `--persist user`).

Must never: show a secret (values come masked from `config_show`), or write a file for a
session change.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ..config import ConfigError, parse_key
from ..config import commands as config_commands
from ..workspace import Workspace
from .comm import LogicianComms


class ConfigView:
    """`LogicianComms.config`: the effective configuration, and one key changed."""

    def __init__(self, workspace: Workspace, comms: LogicianComms) -> None:
        self.workspace = workspace
        self.comms = comms

    def show(self) -> dict[str, Any]:
        config = self.workspace.config
        shown = json.loads(config_commands.config_show(config, as_json=True))
        rows = []
        for key, row in shown["settings"].items():
            rows.append(
                {
                    "key": key,
                    "value": row["value"],
                    "text": config_commands.shown_value(row["value"]),
                    "layer": row["layer"],
                    "where": config.layer(row["layer"]).where(parse_key(key)),
                    "restart_required": row["restart_required"],
                }
            )
        return {
            "workspace": shown["workspace"],
            "trusted": shown["trusted"],
            "layers": shown["layers"],
            "notices": shown["notices"],
            "dropped": shown["dropped"],
            "held_back": shown["trust"]["held_back"],
            "model_refusal": shown["model_calls"]["refused"],
            "api_key": shown["api_key"]["said"],
            "rows": rows,
        }

    def set(self, key: str, value: str, persist: Literal["session", "user"]) -> dict[str, Any]:
        try:
            config, said = config_commands.config_set(
                self.workspace.config, key, value, persist=None if persist == "session" else persist
            )
        except ConfigError as exc:
            return {"ok": False, "key": key, "error": str(exc)}
        self.workspace.use_config(config)
        self.comms.push_status(force=True)
        return {"ok": True, "key": key, "said": said}
