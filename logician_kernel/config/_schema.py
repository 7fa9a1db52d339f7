"""The settings schema: every knob the product is configured by, as frozen pydantic models.

This module owns the *shape* of configuration only. It never reads a file or the environment;
layers are found by `_sources`, merged by `_merge` and validated once, here, by
`LogicianSettings.model_validate`.

Each field carries a docstring (exported as its JSON-schema description). Field metadata in
`json_schema_extra` declares:

- `"merge": "union" | "replace"` on every list: how a higher layer combines with a lower one;
- `"restart_required": true` on fields that only take effect after a kernel restart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from ._hooks_schema import HookSettings
from ._mcp_schema import McpSettings
from ._model_schema import DEFAULT_API_KEY_ENV, DEFAULT_MODEL_NAME, ModelSettings
from ._profiles import ProfileData, unknown_profile, valid_name

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MODEL_NAME",
    "AgentSettings",
    "BudgetSettings",
    "CheckpointSettings",
    "CompactionSettings",
    "HookSettings",
    "LogicianSettings",
    "ModelPrice",
    "ModelSettings",
    "ToolSettings",
    "PermissionSettings",
    "UiSettings",
    "WorkspaceSettings",
]

UNION: dict[str, Any] = {"merge": "union"}
REPLACE: dict[str, Any] = {"merge": "replace"}
RESTART: dict[str, Any] = {"restart_required": True}


SCHEMA_FILE = Path(__file__).resolve().parent.parent / "resources" / "config.schema.json"
"""The JSON Schema shipped in the package, generated from these models (a test keeps it equal
to `logician config schema`; regenerate with
`logician config schema > logician_kernel/resources/config.schema.json`). Config files name it
in a first `#:schema` line, so taplo / Even Better TOML check them as you type."""


# A permission rule is a tool name, optionally followed by a parenthesised argument pattern:
# `bash`, `bash(git status*)`, `write(src/**)`. The rules engine interprets the pattern later.
_RULE = re.compile(r"^[a-z_][a-z0-9_.-]*(\(.*\))?$", re.DOTALL)

StatusField = Literal["phase", "model", "tokens", "cost", "elapsed", "tool", "frame"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)  # descriptions: _field_docs.py


class WorkspaceSettings(_Section):
    """Which directory the agent works in."""

    root: Path | None = Field(
        default=None, examples=["~/projects/my-repo"], json_schema_extra=RESTART
    )
    """Workspace root override. When unset, the root is the top of the git work tree containing
    the kernel's start directory, or that directory itself outside a repository. `~` is
    expanded; a relative path is taken from the start directory. The project file cannot set
    this (it lives inside the workspace it would choose). Takes effect after a kernel restart."""


class CheckpointSettings(_Section):
    """File checkpoints: the per-cell frame of workspace pre-images that `rewind` restores."""

    enabled: bool = Field(default=True, json_schema_extra=RESTART)
    """Capture workspace pre-images for every cell so `%logician rewind` can restore them.
    Takes effect after a kernel restart: toggling it mid-session would leave frames without
    pre-images, and a rewind across that gap could not be exact."""

    # -- large files (issue 21): the side store under .logician/large ----------------------
    max_file_bytes: int = Field(default=2 * 1024**3, ge=1)
    """Files larger than this many bytes are not captured (a rewind reports them instead).
    Default 2 GiB."""

    large_file_bytes: int = Field(default=4 * 1024**2, ge=1)
    """Files larger than this (and SQLite databases of any size) are captured in the side
    store (`.logician/large/`: plain, content-addressed copies, reflinked where the file system
    allows) instead of git's compressed objects. Default 4 MiB."""

    max_store_bytes: int | None = Field(default=None, ge=1, examples=[10_000_000_000])
    """Upper bound of the side store and the variables store together, in bytes. Unset: the
    smaller of 20 GB and 25% of the space free at the workspace when the kernel starts. Beyond
    it the oldest pre-images (large files and earlier variable values) outside the
    `keep_recent_frames` newest frames are evicted (their frames say "large files evicted" or
    "variables evicted"); if that is not enough, the file is reported as not captured."""

    keep_recent_frames: int = Field(default=20, ge=0)
    """Large pre-images and earlier variable values of this many newest frames are never
    evicted to make room (an explicit `%logician gc --keep N` may go lower)."""

    min_free_bytes: int = Field(default=1024**3, ge=0)
    """Large-file capture pauses, with a notice, while the disk holding the workspace has less
    than this many bytes free. Default 1 GiB."""

    ignore: tuple[str, ...] = Field(
        default=(), examples=[["*.ckpt", "data/raw/**"]], json_schema_extra=UNION
    )
    """Extra gitignore-style patterns never captured, on top of the built-in ones
    (`.git/`, `.logician/`). Merge rule: union - every layer's patterns apply."""

    change_detection: Literal["auto", "inotify", "scan"] = Field(
        default="auto", json_schema_extra=RESTART
    )
    """How a frame learns which files changed: `inotify` (kernel events; cost grows with
    the changes), `scan` (a stat scan of the workspace at each cell; sees writes made by
    other machines on a shared volume), or `auto`: inotify on local file systems, the scan
    on NFS/CIFS/FUSE/overlay volumes and once inotify watches run out.
    Takes effect after a kernel restart."""

    scan_idle_looks: bool = False
    """With the stat scan only: for 30 s after each cell, re-read the workspace every 0.75 s
    while the kernel is idle, so a cell after a pause reads it once (after the cell) instead of
    twice. Faster (10k files: about +30 instead of +57 ms per cell), but a file another
    program (not JupyterLab) saves in the second before a cell that then overwrites it gets its
    pre-save content as the pre-image, so a rewind of that cell would undo the save. Off: every
    cell after a pause reads the workspace before it runs. Applies from the next cell."""

    attribution: bool = True
    """Record who made each change of a frame - the cell's code, an agent tool call, or
    someone outside this kernel (a JupyterLab save, another program or kernel) - so a rewind
    never reverts external changes (`--include-external` does). Off: the kernel's process is
    not audited and every change counts as the cell's, as before. Applies from the next cell."""

    variables: bool = True
    """Capture the notebook's user variables at every frame, so a rewind brings the namespace
    back with the files (`%logician vars N` lists what a frame changed). Applies from the next
    cell on."""

    max_variable_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    """Serialized bytes of variables one frame may store; a value past this budget is recorded
    as not captured (named, with the reason) instead of stored."""

    variable_ignore: tuple[str, ...] = Field(
        default=(), examples=[["big_*", "model"]], json_schema_extra=UNION
    )
    """Name patterns (shell-style, `big_*`) of variables never captured nor restored.
    Merge rule: union - every layer's patterns apply."""


def _check_rule(rule: str) -> str:
    if not _RULE.match(rule):
        raise ValueError("a rule like 'bash(git status*)', 'write(src/**)' or 'read'")
    return rule


Rule = Annotated[str, AfterValidator(_check_rule)]


class PermissionSettings(_Section):
    """What the agent may do without asking. Rules read `tool(pattern)`, e.g.
    `bash(git status*)`, `write(src/**)`, or a bare tool name."""

    mode: Literal["ask", "read-only", "auto-edit", "full-auto"] = "ask"
    """Baseline: `ask` asks before every effect; `read-only` refuses writes and commands;
    `auto-edit` allows workspace edits but asks before commands; `full-auto` allows everything
    not denied. Rules refine the baseline; deny always wins."""

    allow: tuple[Rule, ...] = Field(
        default=(), examples=[["bash(git status*)", "read(**)"]], json_schema_extra=UNION
    )
    """Rules allowed without asking. Merge rule: union - a higher layer adds rules, it never
    removes a lower layer's."""

    ask: tuple[Rule, ...] = Field(
        default=(), examples=[["bash(git push*)"]], json_schema_extra=UNION
    )
    """Rules that always ask, even when the mode or an allow rule would allow.
    Merge rule: union."""

    deny: tuple[Rule, ...] = Field(
        default=(), examples=[["bash(rm -rf*)", "write(.env*)"]], json_schema_extra=UNION
    )
    """Rules always refused, whatever the mode. Merge rule: union - no layer can lift a deny
    set by another."""

    headless: Literal["deny", "allow"] = "deny"
    """What a call that needs a decision gets when no one can be asked (`logician run`, or a
    client that neither renders widgets nor answers on stdin): `deny` (the default) refuses it
    and tells the agent why; `allow` lets it run. Either way the audit log says so."""


class ModelPrice(_Section):
    """Price of one model, in US dollars per million tokens."""

    input_per_mtok: float = Field(ge=0)
    """Dollars per million input tokens."""

    output_per_mtok: float = Field(ge=0)
    """Dollars per million output tokens."""

    cached_input_per_mtok: float | None = Field(default=None, ge=0, examples=[0.5])
    """Dollars per million cached input tokens; unset means the input price."""


class BudgetSettings(_Section):
    """Run budget: limits on one agent run (one `%%logician` cell). Unset means no limit."""

    max_turns: int | None = Field(default=50, ge=1)
    """Model turns per run."""

    max_tool_calls: int | None = Field(default=200, ge=1)
    """Tool calls per run."""

    max_input_tokens: int | None = Field(default=None, ge=1, examples=[2_000_000])
    """Input tokens per run, summed over turns."""

    max_output_tokens: int | None = Field(default=None, ge=1, examples=[200_000])
    """Output tokens per run, summed over turns."""

    max_cost_usd: float | None = Field(default=None, gt=0, examples=[5.0])
    """Cost per run in US dollars, from `prices`; a model without a price is not costed."""

    max_wall_seconds: float | None = Field(default=1800.0, gt=0)
    """Wall-clock seconds per run."""

    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Prices by model name, for `max_cost_usd` and the status display. Merged per model and
    per field: a higher layer overrides only the entries it sets."""


class CompactionSettings(_Section):
    """Compaction of the conversation projection when the context fills up."""

    enabled: bool = True
    """Compact automatically when the threshold is reached."""

    threshold_fraction: float = Field(default=0.8, gt=0, lt=1)
    """Compact when the projection reaches this fraction of the context window (0 < x < 1)."""

    keep_recent_turns: int = Field(default=4, ge=0)
    """Most recent turns kept verbatim by a compaction."""

    max_compactions_before_checkpoint: int = Field(default=3, ge=1)
    """Compactions in one thread before escalating to a run-checkpoint handoff."""


class ToolSettings(_Section):
    """Limits of the agent's tools."""

    python_timeout_seconds: float = Field(default=300.0, gt=0)
    """Wall-clock limit of one `python` tool call; the code is interrupted after it (as by a
    kernel interrupt) and the model is told it timed out."""

    bash_timeout_seconds: float = Field(default=120.0, gt=0)
    """Wall-clock limit of one `bash` call; its whole process group is killed after it."""


class AgentSettings(_Section):
    """What the agent is told besides the prompt."""

    context_tokens: int = Field(default=2_000, ge=0, le=50_000)
    """Budget (estimated tokens) of the notebook context each prompt carries: the notebook's
    path, the prompting cell's id and position, the cells run just before it, the previous
    cell's error and a summary of the user's variables (names, types, shapes, a DataFrame's
    columns - never values), secrets masked. Below 100 none is sent (`0` turns it off);
    `%logician context` shows it."""


class UiSettings(_Section):
    """Notebook presentation."""

    status_widget: bool = True
    """Show the live status widget under `%%logician` cells."""

    approvals: Literal["auto", "widget", "stdin"] = "auto"
    """Where the agent asks for a decision: `widget` (a card in the cell), `stdin` (a prompt
    answered in the frontend, for clients that cannot render widgets), or `auto`: the card
    when the frontend has shown it renders widgets, else the prompt when the cell may read
    stdin. The `logician` comm (the lab sidebar) can answer in every case."""

    answer: Literal["auto", "markdown", "stream"] = "auto"
    """How the agent's answer reaches the cell: `markdown` (one output, re-rendered as it
    streams), `stream` (plain text on stdout, each piece printed once, for terminals that print
    every display update), or `auto`: `stream` where the frontend can read stdin but renders
    neither widgets nor the lab extension (`jupyter console`), else `markdown`."""

    notices: Literal["sidebar", "cell", "off"] = "sidebar"
    """Where Logician's notices go (variables or paths not captured, the thread a kernel
    reopened, frames off, ...): `sidebar` sends them to the lab extension's sidebar (a count
    in the status bar), `cell` prints them on stderr in the output of the cell they are about,
    as a plain kernel would print a warning, `off` shows them nowhere. Every one is also
    written to the kernel log and kept for `%logician notices` (`--all` for the whole session),
    and `%logician status` counts the unread ones; with `sidebar` and `off` a plain cell's
    outputs are exactly what ipykernel produces."""

    coalesce_hz: int = Field(default=10, ge=1, le=120)
    """Maximum display updates per second while streaming; deltas in between are coalesced."""

    max_output_chars: int = Field(default=20_000, ge=100)
    """Tool output longer than this is truncated in the notebook (never in the ledger)."""

    show_routine_allows: bool = False
    """Show routine automatic permission allows in the transcript (they are always in the
    audit log)."""

    status_fields: tuple[StatusField, ...] = Field(
        default=("phase", "model", "tokens", "cost", "elapsed"), json_schema_extra=REPLACE
    )
    """Fields the status widget shows, in order. Merge rule: replace - the highest layer that
    sets the list decides it alone."""


class LogicianSettings(_Section):
    """Logician Kernel configuration. Layers, lowest to highest: defaults, user file, trusted
    project file `.logician/config.toml`, the selected profile, `LOGICIAN_<SECTION>__<KEY>`
    environment variables, session overrides."""

    workspace: WorkspaceSettings = Field(default_factory=WorkspaceSettings)
    """Workspace location."""

    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    """File checkpoints for rewind."""

    model: ModelSettings = Field(default_factory=ModelSettings)
    """Model provider and request behaviour."""

    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    """Permission mode and allow / ask / deny rules."""

    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    """Run budget."""

    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    """Context compaction."""

    tools: ToolSettings = Field(default_factory=ToolSettings)
    """Tool limits (timeouts)."""

    agent: AgentSettings = Field(default_factory=AgentSettings)
    """What the agent is told besides the prompt (the notebook context)."""

    ui: UiSettings = Field(default_factory=UiSettings)
    """Notebook presentation."""

    hooks: HookSettings = Field(default_factory=HookSettings)
    """Shell commands run before and after tool calls and at the start and end of a run."""

    mcp: McpSettings = Field(default_factory=McpSettings)
    """MCP tool servers (`[mcp.servers.NAME]`)."""

    profiles: dict[str, ProfileData] = Field(
        default_factory=dict, examples=[{"cheap": {"model": {"name": "gpt-4.1-mini"}}}]
    )
    """Named profiles, each any subset of these settings (`[profiles.cheap]`), applied as a
    layer above the project file and below the environment when selected."""

    profile: str | None = Field(default=None, examples=["cheap"])
    """The profile to apply (a key of `profiles`); `LOGICIAN_PROFILE` and `%%logician
    --profile NAME` (one cell) select one too."""

    @field_validator("profiles")
    @classmethod
    def _profile_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not valid_name(name):
                raise ValueError(f"profile name {name!r}: use letters, digits, '_' and '-'")
        return value

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str | None, info: ValidationInfo) -> str | None:
        known = info.data.get("profiles")
        if value is not None and isinstance(known, dict) and value not in known:
            raise PydanticCustomError("profile_unknown", unknown_profile(value, list(known)))
        return value
