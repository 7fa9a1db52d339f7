"""Which user variables a frame created, changed or deleted, and storing their new values.

Detection is cheap by construction (after Kishu's and ElasticNotebook's "accessed variables"
idea, without their object graphs):

* at frame open, one pass over the user namespace records a fingerprint per name: the
  object's id and type, plus `len` for builtin containers and `shape` for numpy/pandas
  objects (no hashing, no traversal);
* at frame close, the same pass finds names bound, rebound or deleted, and containers whose
  length or shape changed (a function appending to a global list is caught here);
* in-place mutation that keeps the fingerprint (`arr += 1`, `d['k'] = v`) is found by a
  content hash, computed only for *candidates*: names the frame's code mentions (the cell,
  and every `python` tool call of an agent cell), names the notebook functions it calls read
  as globals, and names bound to the very same objects. The hash is the serializer's own
  output, so a value that changed is written from the bytes already produced.

Every name the user's code bound counts, whatever its class (IPython's `SList`,
`CapturedIO`, display handles, the shell, modules); only IPython's bookkeeping names (`In`,
`Out`, `_`, `_N`, `_iN`, `_ih`, `exit`, `get_ipython`, ... and whatever the shell hides
under its own value) are outside the rewind. A value that cannot be stored is recorded as
not captured, with the reason.

An untouched object (not mentioned, fingerprint unchanged) is never hashed or serialized,
however large. Known blind spot: a mutation through a second path the code does not name
(a numpy view bound under another name, an object reached through a container) that keeps
the length and shape.

Must never: raise into the user's cell (every failure becomes a `not_captured` reason).
"""

from __future__ import annotations

import fnmatch
import re
import sys
import time
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ledger.thread_ledger import VariableRecord
from .variable_store import Pickled, SerializeError, VariableStore, digest_of, pickle_group

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IPYTHON_HIDDEN = re.compile(r"^(_+|_i+|_i?\d+|_[iod]h|_exit_code|In|Out|get_ipython|exit|quit)$")
_SIZED = (list, dict, set, frozenset, tuple, str, bytes, bytearray)
_SHAPED = ("numpy", "pandas")
_CONTAINERS = (list, tuple, set, frozenset, dict)
_SPECULATE = 16 * 1024 * 1024
"""Mentioned values at least this large are written while they are hashed."""
_SHARED_SCAN_LIMIT = 10_000
"""Elements of a changed container checked for objects also bound to other names."""

Fingerprint = tuple[int, type, Any]


def _kind_class(kind: type) -> int:
    """1: a builtin container (`len` is its size); 2: numpy/pandas (`shape`); 3: anything
    else (identity only). Every class counts: IPython's objects (`SList`, `CapturedIO`,
    display handles, the shell) and modules are the user's when the user bound them."""
    if kind in _SIZED:
        return 1
    return 2 if kind.__module__.split(".", 1)[0] in _SHAPED else 3


def type_name(value: Any) -> str:
    kind = type(value)
    if kind is types.ModuleType:
        return f"module {getattr(value, '__name__', '?')}"
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


@dataclass
class _Open:
    frame: int
    before: dict[str, Fingerprint]
    code: list[str] = field(default_factory=list)
    open_ms: float = 0.0


class VariableCapture:
    """Detects and stores one namespace's variable changes, frame by frame."""

    def __init__(
        self,
        store: VariableStore,
        *,
        max_bytes: int = 256 * 1024 * 1024,
        ignore: Iterable[str] = (),
        hidden: Mapping[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.ignore = tuple(ignore)
        self.hidden = hidden
        """The shell's hidden names (`In`, `Out`, `get_ipython`, ...) and their values."""
        self._open: _Open | None = None
        self._digests: dict[str, tuple[int, str]] = {}
        """Per name: the id and content digest of the value last stored or checked."""
        self._names: dict[str, bool] = {}
        self._kinds: dict[type, int] = {}

    # -- which names are the user's -----------------------------------------------------------

    def configure(self, *, max_bytes: int, ignore: Iterable[str]) -> None:
        self.max_bytes = max_bytes
        self.ignore = tuple(ignore)
        self._names.clear()

    def _name_ok(self, name: str) -> bool:
        if name.startswith("__") or _IPYTHON_HIDDEN.match(name):
            return False
        return not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.ignore)

    def user_names(self, namespace: Mapping[str, Any]) -> dict[str, Fingerprint]:
        """A fingerprint per user variable: one pass, verdicts cached per name and per type."""
        names, kinds, hidden = self._names, self._kinds, self.hidden or {}
        out: dict[str, Fingerprint] = {}
        for name, value in list(namespace.items()):
            ok = names.get(name)
            if ok is None:
                ok = names[name] = self._name_ok(name)
            kind = type(value)
            cls = kinds.get(kind)
            if cls is None:
                cls = kinds[kind] = _kind_class(kind)
            if not ok or (name in hidden and hidden[name] is value):
                continue
            if cls == 1:
                out[name] = (id(value), kind, len(value))
            elif cls == 2:
                shape = getattr(value, "shape", None)
                out[name] = (id(value), kind, shape if isinstance(shape, tuple) else None)
            else:
                out[name] = (id(value), kind, None)
        return out

    # -- a frame ------------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self._open is not None

    def open(self, frame: int, namespace: Mapping[str, Any], code: str = "") -> None:
        started = time.perf_counter()
        before = self.user_names(namespace)
        self._open = _Open(frame, before, [code], (time.perf_counter() - started) * 1000)

    def add_code(self, code: str) -> None:
        """More code ran in this frame (an agent's `python` tool call)."""
        if self._open is not None:
            self._open.code.append(code)

    def close(self, namespace: Mapping[str, Any]) -> tuple[int, list[VariableRecord], float] | None:
        """The frame's records (one per touched name) and how long capture took, in ms."""
        state, self._open = self._open, None
        if state is None:
            return None
        started = time.perf_counter()
        try:
            records = self._capture(state, namespace)
        except Exception as exc:  # noqa: BLE001 - never break the user's cell
            records = [
                VariableRecord(
                    name="*",
                    action="changed",
                    not_captured=f"variable capture failed: {exc!r}"[:200],
                )
            ]
        return state.frame, records, state.open_ms + (time.perf_counter() - started) * 1000

    def _capture(self, state: _Open, namespace: Mapping[str, Any]) -> list[VariableRecord]:
        before = state.before
        now = self.user_names(namespace)
        actions: dict[str, str] = {}
        for name, fp in now.items():
            old = before.get(name)
            if old is None:
                actions[name] = "created"
            elif old != fp:
                actions[name] = "changed"
        deleted = [n for n in before if n not in now]
        digests: dict[str, Pickled] = {}
        candidates = self._candidates(state, now, namespace)
        if candidates:  # and every name bound to the same objects
            ids = {now[n][0] for n in candidates}
            candidates.update(n for n, fp in now.items() if fp[0] in ids)
        for name in sorted(candidates - actions.keys()):
            value = namespace[name]
            try:
                pickled = pickle_group({name: value}, namespace, digest=False)
            except SerializeError:
                continue  # unpicklable and not rebound: its last record already says so
            seen = self._digests.get(name)
            # A large buffer is written while it is hashed; kept only if it changed.
            speculative = (
                self.store.speculate(pickled)
                if _SPECULATE <= pickled.size <= self.max_bytes
                else None
            )
            pickled.digest = digest_of(pickled)
            if seen is None or seen != (id(value), pickled.digest):
                actions[name] = "changed"
                digests[name] = pickled
                if speculative is not None:
                    speculative.keep(pickled.digest)
            elif speculative is not None:
                speculative.drop()
        _holders(actions, now, namespace)
        records: list[VariableRecord] = []
        if actions:
            ids = {now[n][0] for n in actions}
            for name in actions:
                ids.update(map(id, _items(namespace[name])))
            by_id = _names_by_id(now, ids)
            records = self._store(actions, digests, now, namespace, by_id)
        for name in deleted:
            self._digests.pop(name, None)
            records.append(VariableRecord(name=name, action="deleted"))
        return sorted(records, key=lambda r: r.name)

    def _candidates(
        self, state: _Open, now: dict[str, Fingerprint], namespace: Mapping[str, Any]
    ) -> set[str]:
        words: set[str] = set()
        for code in state.code:
            words.update(_IDENT.findall(code))
        # The namespace's own key objects, not the regex's copies: pickle memoizes by
        # identity, so the same key object keeps a value's digest the same from frame to frame.
        names = {name for name in now if name in words}
        # Notebook functions the code calls: the globals they read are mentioned too.
        todo = [n for n in names if isinstance(namespace.get(n), types.FunctionType)]
        seen_code: set[int] = set()
        while todo:
            fn = namespace.get(todo.pop())
            for code_obj in _code_objects(getattr(fn, "__code__", None), seen_code):
                for ref in code_obj.co_names:
                    if ref in now and ref not in names:
                        names.add(ref)
                        if isinstance(namespace.get(ref), types.FunctionType):
                            todo.append(ref)
        return names

    def _store(
        self,
        actions: dict[str, str],
        pickled: dict[str, Pickled],
        now: dict[str, Fingerprint],
        namespace: Mapping[str, Any],
        by_id: dict[int, list[str]],
    ) -> list[VariableRecord]:
        records: list[VariableRecord] = []
        budget = self.max_bytes
        for group in _groups(actions, now, namespace, by_id):
            values = {n: namespace[n] for n in group}
            kinds = {n: type_name(v) for n, v in values.items()}
            reason = None
            blob = None
            size = sum(
                int(getattr(v, "nbytes", 0) or 0)
                for v in values.values()
                if type(v).__module__.split(".", 1)[0] in _SHAPED
            )
            single: dict[str, Pickled] = {}
            if size <= budget:
                try:
                    for n in group:
                        single[n] = pickled.get(n) or pickle_group({n: values[n]}, namespace)
                    together = (
                        single[group[0]] if len(group) == 1 else pickle_group(values, namespace)
                    )
                    size = together.size
                    if size <= budget:
                        self.store.write(together)
                        blob = together.digest
                        budget -= size
                except SerializeError as exc:
                    reason = str(exc)
                except OSError as exc:
                    reason = f"could not be written to the variables store ({exc.strerror or exc})"
            if blob is None and reason is None:
                reason = (
                    f"{size:,} bytes: over checkpoints.max_variable_bytes "
                    f"({self.max_bytes:,} per frame)"
                )
            for n in group:
                if blob is not None and n in single:
                    self._digests[n] = (id(values[n]), single[n].digest)
                else:
                    self._digests.pop(n, None)
                records.append(
                    VariableRecord(
                        name=n,
                        action=actions.get(n, "shared"),  # type: ignore[arg-type]
                        type=kinds[n],
                        blob=blob,
                        digest=single[n].digest if n in single else None,
                        size=size,
                        not_captured=reason,
                    )
                )
        return records

    def restored(self, name: str, value: Any, digest: str | None) -> None:
        """A rewind put `value` back under `name`: it is unchanged until a cell changes it."""
        if digest is None:
            self._digests.pop(name, None)
        else:
            self._digests[name] = (id(value), digest)

    def forget(self, name: str) -> None:
        self._digests.pop(name, None)


def _code_objects(code: types.CodeType | None, seen: set[int]) -> Iterable[types.CodeType]:
    if code is None or id(code) in seen:
        return
    seen.add(id(code))
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const, seen)


def _names_by_id(now: dict[str, Fingerprint], ids: set[int]) -> dict[int, list[str]]:
    """The names bound to each of `ids` (one pass; only the ids asked about are indexed)."""
    by_id: dict[int, list[str]] = {}
    for name, fp in now.items():
        if fp[0] in ids:
            by_id.setdefault(fp[0], []).append(name)
    return by_id


def _items(value: Any) -> Iterable[Any]:
    kind = type(value)
    if kind in (list, tuple, set, frozenset) and len(value) <= _SHARED_SCAN_LIMIT:
        return value
    if kind is dict and len(value) <= _SHARED_SCAN_LIMIT:
        return value.values()
    return ()


def _holders(
    actions: dict[str, str], now: dict[str, Fingerprint], namespace: Mapping[str, Any]
) -> None:
    """A live container holding a changed object changed too (`nested = [a]`, then
    `a.append(1)`): one level deep, containers up to `_SHARED_SCAN_LIMIT` elements."""
    # An object referenced only by its one name (the namespace entry, plus getrefcount's own
    # argument) sits in no container: the common case costs no scan at all.
    changed = {
        now[n][0]
        for n, a in actions.items()
        if a == "changed" and sys.getrefcount(namespace[n]) > 2
    }
    if not changed:
        return
    for name, (_, kind, _) in now.items():
        if kind in _CONTAINERS and name not in actions:
            if not changed.isdisjoint(map(id, _items(namespace[name]))):
                actions[name] = "changed"


def _groups(
    actions: dict[str, str],
    now: dict[str, Fingerprint],
    namespace: Mapping[str, Any],
    by_id: dict[int, list[str]],
) -> list[list[str]]:
    """Changed names, with every live name sharing an object with them, grouped together."""
    parent: dict[str, str] = {}

    def find(n: str) -> str:
        while parent.setdefault(n, n) != n:
            n = parent[n]
        return n

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    for name in actions:
        find(name)
        for other in by_id.get(now[name][0], ()):
            join(name, other)
        for item in _items(namespace[name]):
            for other in by_id.get(id(item), ()):
                join(name, other)
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(find(name), []).append(name)
    return [sorted(g) for g in groups.values()]
