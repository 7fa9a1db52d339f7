"""The closed set of thread-ledger entry kinds: one discriminated union, a docstring under
every field. Pure vocabulary: the ledger (`thread_ledger.py`) appends and projects them.

The kinds live by subject - `frame_entries.py` (frames, rewinds and what they restore),
`conversation_entries.py` (sessions, messages, tool calls, approvals, recovery), on
`entry_base.py` - and this module unites them into `Entry` and reads a record into its kind,
sharing what equal entries hold: import the kinds from here.

Must never: do I/O, or grow a kind without a docstring on each field.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..types.path_states import Fingerprint, PathState
from ..types.tagged import validate_by_kind
from .conversation_entries import (
    ApprovalRequested,
    ApprovalResolved,
    CallWatch,
    MessageEntry,
    Quarantine,
    Recovery,
    RestorableCall,
    RunEnd,
    SessionStart,
    ToolCommit,
    ToolIntent,
    ToolOutcome,
    ToolRecovery,
)
from .entry_base import FrameOutcome, ProjectionReason
from .frame_entries import (
    CallRewound,
    CellEdit,
    CellRestore,
    CellState,
    FileCheckpoint,
    FrameClose,
    FrameOpen,
    FramePreSnapshot,
    ProjectionItem,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    VariableRecord,
    VariablesCaptured,
)

__all__ = [
    "ApprovalRequested",
    "ApprovalResolved",
    "CallRewound",
    "CallWatch",
    "CellEdit",
    "CellRestore",
    "CellState",
    "ENTRY_ADAPTER",
    "Entry",
    "FRAME_KINDS",
    "FileCheckpoint",
    "FrameClose",
    "FrameOpen",
    "FrameOutcome",
    "FramePreSnapshot",
    "MessageEntry",
    "ProjectionItem",
    "ProjectionReason",
    "Quarantine",
    "Recovery",
    "RestorableCall",
    "RestoredPath",
    "RestoredVariable",
    "RewindPlanned",
    "RewindProgress",
    "RewindStep",
    "RunEnd",
    "SessionStart",
    "ToolCommit",
    "ToolIntent",
    "ToolOutcome",
    "ToolRecovery",
    "VariableRecord",
    "VariablesCaptured",
    "build_validators",
    "read_entry",
]


Entry = Annotated[
    SessionStart
    | FrameOpen
    | FramePreSnapshot
    | FrameClose
    | FileCheckpoint
    | MessageEntry
    | ToolIntent
    | ToolOutcome
    | ToolCommit
    | Quarantine
    | RestorableCall
    | CallWatch
    | CallRewound
    | CellEdit
    | CellRestore
    | ApprovalRequested
    | ApprovalResolved
    | RunEnd
    | VariablesCaptured
    | ProjectionItem
    | RewindPlanned
    | RewindProgress
    | Recovery,
    Field(discriminator="kind"),
]


ENTRY_ADAPTER: TypeAdapter[Entry] = TypeAdapter(Entry, config=ConfigDict(defer_build=True))
"""Built on first use: `read_entry` goes to a kind's own model, and here only for a record
no kind reads (whose error it then raises)."""


_KINDS: dict[str, type[BaseModel]] = {
    model.model_fields["kind"].default: model for model in get_args(get_args(Entry)[0])
}


_FIELD_SETS: dict[frozenset[str], set[str]] = {}


_RECENT: dict[Any, Any] = {}
"""Values and frozen models read lately, each kept once: a frame's post-states are the next
frame's pre-states, its path and evidence the same as the last frame's (bounded; cleared when
full, which only costs sharing across that moment)."""


_RECENT_MAX = 4096


FRAME_KINDS: tuple[type[BaseModel], ...] = (
    FrameOpen,
    FrameClose,
    VariablesCaptured,
    VariableRecord,
)
"""What every cell's frame appends: their validators are built off the first cell's path
(`build_validators`, from the thread that takes the first snapshot)."""


def build_validators(kinds: tuple[type[BaseModel], ...]) -> None:
    """Build these models' validators now rather than at their first use (`defer_build`);
    thread-safe (pydantic builds under its lock), a no-op for one already built."""
    for kind in kinds:
        kind.model_rebuild()


def read_entry(record: dict[str, Any]) -> Entry:
    """Validate one ledger record into its entry, as `ENTRY_ADAPTER` does, holding less.

    Every validated model carries its own set of the field names it was given (pydantic's
    `model_fields_set`, 728 bytes from five names up): the entry and each model inside it, two
    thirds of what a frame's entries take in memory, kept for the whole session. Entries and
    what they hold are frozen, so nothing adds to such a set in place (`model_copy` gives the
    copy a set of its own): models given the same fields share one. Equal strings and equal
    models inside entries read lately are shared too (a path state, a blob id, a path)."""
    entry = _validate(record)
    share_entry(entry)
    return entry


def share_entry(entry: BaseModel, *, built: bool = False) -> BaseModel:
    """`entry`, holding less: what `read_entry` does after validating. `built`: an entry
    appended as built (`exact_in_json`); each model in it then counts every field as given,
    as a model validated from its record does (a record names every field)."""
    if len(_RECENT) > _RECENT_MAX:
        _RECENT.clear()
    _share(entry, built)
    return entry


_EXACT: dict[type, bool] = {}
_EXACT_LEAVES: frozenset[object] = frozenset({str, int, float, bool, type(None)})


def exact_in_json(kind: type[BaseModel]) -> bool:
    """Whether every value a `kind` can hold reads back from its JSON record as the very value
    it holds: its fields, and those of the models inside it, are strings, numbers, booleans,
    None, literals, lists of these and frozen models of these (validation has already coerced
    each to its type: a tuple to a list, 5 to 5.0). Not a kind with `Any` or a dict, whose
    values keep what they were given (a tuple stays a tuple until read back). Such a kind's
    entry is held as built: validating it again from its own record (a large frame close:
    5,000 path changes, 50 ms) would give an equal entry."""
    known = _EXACT.get(kind)
    if known is None:
        _EXACT[kind] = False  # a model that holds itself is not exact (none does)
        known = _EXACT[kind] = bool(kind.model_config.get("frozen")) and all(
            _exact_type(field.annotation) for field in kind.model_fields.values()
        )
    return known


def _exact_type(annotation: object) -> bool:
    if annotation in _EXACT_LEAVES:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return exact_in_json(annotation)
    origin = get_origin(annotation)
    if origin is Literal:
        return all(type(arg) in (str, int, bool) for arg in get_args(annotation))
    if origin is list or origin is Union or origin is UnionType:
        return all(_exact_type(arg) for arg in get_args(annotation))
    return False


def _validate(record: dict[str, Any]) -> Entry:
    """`ENTRY_ADAPTER.validate_python(record)`, through the kind's own model
    (`types.tagged`)."""
    kind = record.get("kind") if isinstance(record, dict) else None
    return validate_by_kind(_KINDS, ENTRY_ADAPTER, record, kind)  # type: ignore[no-any-return]


_CLASS_SETS: dict[type, set[str]] = {}
"""Per model class, the field-name set its models were last given (the common case: one set
per class), compared before a `frozenset` of the names is made to look the shared one up."""


_VALUE_MODELS: frozenset[type] = frozenset({PathState, Fingerprint})
"""The models that recur equal from entry to entry (a frame's post-state is the next one's
pre-state): only these are looked up by value. Hashing every model (a change, an evidence
record) found next to no equal one and cost as much as validating the entry again."""


class _Plan(NamedTuple):
    """What `_share` asks of a model class, worked out once per class."""

    frozen: bool
    """A mutable model adds to its field-name set on assignment, so it keeps its own."""
    by_value: bool
    """One of `_VALUE_MODELS`."""
    every: set[str]
    """The shared set of all its field names (what a model built, not read, is given)."""
    holders: tuple[str, ...]
    """The fields that can hold a string, a list or a model (not those of numbers only)."""


_PLANS: dict[type, _Plan] = {}
_NUMBERS: frozenset[object] = frozenset({int, float, bool, type(None)})


def _plan(cls: type[BaseModel]) -> _Plan:
    names = frozenset(cls.model_fields)
    plan = _PLANS[cls] = _Plan(
        bool(cls.model_config.get("frozen")),
        cls in _VALUE_MODELS,
        _FIELD_SETS.setdefault(names, set(names)),
        tuple(
            name for name, field in cls.model_fields.items() if not _numbers_only(field.annotation)
        ),
    )
    return plan


def _numbers_only(annotation: object) -> bool:
    if annotation in _NUMBERS:
        return True
    origin = get_origin(annotation)
    return (origin is Union or origin is UnionType) and all(
        _numbers_only(arg) for arg in get_args(annotation)
    )


def _share(model: BaseModel, built: bool = False) -> None:
    # On the path of every large record (a frame's close, a rewind's plan: 5,000 changes are
    # 25,000 models), so each model costs a few dictionary lookups: the class's plan once, a
    # value model hashed once (`setdefault`), a model in a list told by its class's plan
    # before `isinstance` (an ABC check) is asked.
    cls = type(model)
    plan = _PLANS.get(cls) or _plan(cls)
    if not plan.frozen:
        return
    if built:
        shared = plan.every
    else:
        names = model.__pydantic_fields_set__
        shared = _CLASS_SETS.get(cls)  # type: ignore[assignment]
        if shared is not names and (shared is None or shared != names):
            shared = _CLASS_SETS[cls] = _FIELD_SETS.setdefault(frozenset(names), names)
    if shared is not model.__pydantic_fields_set__:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    fields = model.__dict__
    recent = _RECENT
    plans = _PLANS
    for name in plan.holders:
        value = fields[name]
        kind = type(value)
        if kind is str:
            fields[name] = recent.setdefault(value, value)
        elif kind is list:
            for i, item in enumerate(value):
                kind = type(item)
                if kind is str:
                    value[i] = recent.setdefault(item, item)
                elif kind in plans or isinstance(item, BaseModel):
                    value[i] = _model(item, built)
        elif kind in plans or (kind not in _NUMBERS and isinstance(value, BaseModel)):
            fields[name] = _model(value, built)


def _model(value: BaseModel, built: bool = False) -> BaseModel:
    """`value` with what it holds shared, or an equal path state read lately (already
    shared: `value` is not walked then)."""
    plan = _PLANS.get(type(value)) or _plan(type(value))
    if plan.by_value:
        seen = _RECENT.setdefault(value, value)
        if seen is not value:
            return seen  # type: ignore[no-any-return]
    _share(value, built)
    return value
