"""The sidebar's model picker over the `logician` comm (`models.list`, `model.use`): what
`agent/model_choice.py` lists, and a pick applied to this kernel's session, after which the
status (and so the sidebar and the status bar) names the new model.

Must never: persist a pick (a session override, as `%logician config set model.name`), or
block a frontend longer than the one short request to the server.
"""

from __future__ import annotations

from typing import Any

from ..agent.model_choice import model_choices, use_model
from ..workspace import Workspace
from .comm import LogicianComms


class ModelPicker:
    """`LogicianComms.models`: lists the models and applies a pick."""

    def __init__(self, workspace: Workspace, comms: LogicianComms) -> None:
        self.workspace = workspace
        self.comms = comms

    def choices(self) -> dict[str, Any]:
        return model_choices(self.workspace.config)

    def use(self, name: str) -> dict[str, Any]:
        config, said = use_model(self.workspace.config, name)
        self.workspace.use_config(config)
        self.comms.push_status(force=True)  # the sidebar and the status bar name it
        return {"model": config.settings.model.name, "said": said}
