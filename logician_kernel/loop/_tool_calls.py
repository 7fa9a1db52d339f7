"""Planning the tool calls of one reply: which calls may run together, and why a call is
refused. Pure functions; the harness does the running.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from logician_kernel.providers import argument_problem
from logician_kernel.tools import Tool
from logician_kernel.types.messages import ToolCall
from logician_kernel.types.run import BudgetExhausted, RunOutcome

_RAW_ARGUMENTS_SHOWN = 200


@dataclass(frozen=True)
class Refused:
    """A call that must not run; `reason` is told to the model."""

    call: ToolCall
    reason: str


@dataclass(frozen=True)
class Batch:
    """Calls that run together: several independent read-only calls, or one other call."""

    calls: tuple[tuple[ToolCall, Tool], ...]


def plan(calls: list[ToolCall], tools: Mapping[str, Tool]) -> Iterator[Refused | Batch]:
    """Split a reply's calls, in order, into refusals and batches. Consecutive read-only
    calls form one batch; anything that writes is a batch of its own, so writes keep their
    order relative to every other call."""
    pending: list[tuple[ToolCall, Tool]] = []
    for call in calls:
        tool = tools.get(call.name)
        reason = refusal(call, tool, tools)
        if reason is not None or tool is None:
            if pending:
                yield Batch(tuple(pending))
                pending = []
            yield Refused(call, reason or "")
        elif tool.read_only:
            pending.append((call, tool))
        else:
            if pending:
                yield Batch(tuple(pending))
                pending = []
            yield Batch(((call, tool),))
    if pending:
        yield Batch(tuple(pending))


def refusal(call: ToolCall, tool: Tool | None, tools: Mapping[str, Tool]) -> str | None:
    """Why `call` cannot run, in words the model can act on; `None` if it can."""
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        return (
            f"Error: there is no tool named {call.name!r}, so nothing ran. "
            f"Available tools: {names}."
        )
    if call.invalid_arguments is not None:
        raw = call.invalid_arguments
        shown = repr(raw)
        if len(raw) > _RAW_ARGUMENTS_SHOWN:
            shown = (
                f"{repr(raw[:_RAW_ARGUMENTS_SHOWN])}... ({len(raw)} characters; the first "
                f"{_RAW_ARGUMENTS_SHOWN} shown)"
            )
        return (
            f"Error: the arguments for {call.name} were {argument_problem(raw)}, so the tool "
            f"did not run. Received: {shown}. Call it again with one JSON object matching its "
            "parameters."
        )
    return None


def describe(call: ToolCall, tool: Tool) -> str:
    """The tool's one-line description of the call, or its name if describing fails."""
    try:
        return tool.describe(call.arguments) or call.name
    except Exception:  # a subclass's describe() that raises costs only the label
        return call.name


def denied(call: ToolCall, note: str) -> str:
    """The error result of a call the permission gate refused."""
    why = note.strip().rstrip(".") or "denied"
    return f"Error: {why[0].upper()}{why[1:]}. The {call.name} call did not run."


def hook_denied(call: ToolCall, reason: str) -> str:
    """The error result of a call a `pre_tool` hook refused (exit code 2): its stderr."""
    return f"Error: a pre_tool hook denied the {call.name} call, so it did not run: {reason}"


def not_run(call: ToolCall, outcome: RunOutcome) -> str:
    """The error result of a call the run stopped before: nothing ran."""
    return f"Error: the {call.name} call did not run because the run stopped: {outcome.detail}."


def interrupted_by_wall_time(exhausted: BudgetExhausted) -> str:
    """The error result of a call cancelled when the run's wall-time budget ran out."""
    return (
        f"Error: interrupted by the run's wall-time limit (max_wall_seconds={exhausted.value:g}); "
        "the call was stopped before it finished, and whether it had any effect is unknown."
    )
