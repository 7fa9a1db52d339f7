"""The `[hooks]` section: shell commands run at fixed points of an agent run.

Shape only (see `_schema`); running them is `loop/command_hooks.py`. Every command list is
gated (`_gated.GATED_FIELDS`): a project file's hook runs only once the user allowed it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["HOOK_EVENTS", "HookSettings"]

HOOK_EVENTS = ("pre_tool", "post_tool", "run_start", "run_end")
"""The hook points, in the order a run reaches them (`pre_tool`/`post_tool` once per call)."""

UNION: dict[str, Any] = {"merge": "union"}


def _command(text: str) -> str:
    if not text.strip():
        raise ValueError("a hook command may not be empty")
    return text


Command = Annotated[str, AfterValidator(_command)]


class HookSettings(BaseModel):
    """Shell commands run by `bash -c` in the workspace, each given the event as one JSON
    object on stdin. Merge rule for every list: union - commands from all layers run, lowest
    layer first."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # descriptions: _field_docs.py

    pre_tool: tuple[Command, ...] = Field(
        default=(), examples=[["python scripts/guard.py"]], json_schema_extra=UNION
    )
    """Run before each tool call the permission gate allowed, with `tool`, `arguments`,
    `call_id`, `workspace` and `thread`. Exit code 2 denies the call: the command's stderr is
    the reason the model is given. Any other failure is reported and the call goes on.
    Merge rule: union - every layer's commands run, lowest layer first."""

    post_tool: tuple[Command, ...] = Field(default=(), json_schema_extra=UNION)
    """Run after each tool call's result is recorded; the event adds `result` (`content`,
    bounded, and `is_error`). Merge rule: union."""

    run_start: tuple[Command, ...] = Field(default=(), json_schema_extra=UNION)
    """Run when an agent run starts, with its `prompt` and `model`. Merge rule: union."""

    run_end: tuple[Command, ...] = Field(
        default=(), examples=[["ruff check --fix"]], json_schema_extra=UNION
    )
    """Run when an agent run ends, with its `outcome` (`status`, `detail`), `turns` and
    `tool_calls`. Merge rule: union."""

    timeout_seconds: float = Field(default=30.0, gt=0)
    """Seconds one hook command may run; then its whole process group is killed, the failure
    is reported and the run goes on."""

    max_output_bytes: int = Field(default=64 * 1024, ge=1024)
    """Bytes of each of a hook's stdout and stderr kept (head and tail); the rest is cut."""
