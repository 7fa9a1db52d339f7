"""The sidebar's model picker and *Connect a model* over the `logician` comm: `models.list`
(what `agent/model_choice.py` lists), `model.use` (a pick, for this kernel's session),
`model.default` (*Make default*: the pick persisted to the user config file) and
`model.connect` (check a server with its key, store the key outside the workspace, write a
profile naming it, and use that profile this session). After each change the status (and so
the sidebar and the status bar) names the model in use.

Must never: persist a pick unasked, put the key into an answer, a notice, a log or the
ledger (the answer carries it masked), or block a frontend longer than the one short request
to the server.
"""

from __future__ import annotations

import json
from typing import Any

from ..agent.model_choice import make_default, model_choices, use_model
from ..agent.model_connect import Connection, connect_model
from ..config import ConfigError
from ..config import commands as config_commands
from ..workspace import Workspace
from .comm import LogicianComms

_FORM_FIELDS = {f: f for f in ("provider", "base_url", "api_key", "model", "name")}
"""The form's fields, which a store's refusal may name first (`name: ...`)."""


class ModelPicker:
    """`LogicianComms.models`: lists the models, applies a pick, makes it the default and
    connects a new server."""

    def __init__(self, workspace: Workspace, comms: LogicianComms) -> None:
        self.workspace = workspace
        self.comms = comms

    def choices(self) -> dict[str, Any]:
        return model_choices(self.workspace.config)

    def use(self, name: str) -> dict[str, Any]:
        config, said = use_model(self.workspace.config, name)
        self._apply(config)
        return {"model": config.settings.model.name, "said": said}

    def make_default(self, name: str) -> dict[str, Any]:
        config, said = make_default(self.workspace.config, name)
        self._apply(config)
        return {
            "model": config.settings.model.name,
            "said": said,
            "file": str(config.user_file),
        }

    def connect(self, form: Connection) -> dict[str, Any]:
        """Check, store, write, then use the new profile this session; a refused check or a
        file that cannot be written is answered `ok: false` with the field to fix."""
        try:
            _, done = connect_model(self.workspace.config, form)
        except ValueError as exc:  # ConnectRefused (a field) or ConfigError (a file, a name)
            said = str(exc)
            field = getattr(exc, "field", None) or _FORM_FIELDS.get(said.split(":", 1)[0])
            return {"ok": False, "field": field, "error": said}
        # The user layer and the stored keys are read again, session overrides kept.
        config = self.workspace.reload_config()
        try:
            config, _ = config_commands.config_set(config, "profile", json.dumps(done["profile"]))
        except ConfigError as exc:
            return {"ok": False, "field": None, "error": f"saved, but not in use: {exc}"}
        if done["model"] and config.settings.model.name != done["model"]:
            config, _ = use_model(config, done["model"])  # an older session pick stood above
        self._apply(config)
        return {"ok": True, **done, "model": config.settings.model.name}

    def _apply(self, config: Any) -> None:
        self.workspace.use_config(config)
        self.comms.push_status(force=True)  # the sidebar and the status bar name it
