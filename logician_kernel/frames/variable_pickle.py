"""Serializing a group of kernel values, and loading one back: the bytes a blob carries.

Values are pickled with protocol 5 through cloudpickle (so notebook-defined functions,
lambdas, closures and classes are stored by value and survive a kernel restart). Large
buffers (numpy arrays, pandas blocks, bytes-like objects) go out of band: they are hashed and
written straight from the object's own memory, never copied into one big byte string, and
read back into one buffer that the restored arrays share.

A module (`np`, `sys`) is stored as a reference by its name, never by value: loading it
imports it (a no-op when it is loaded), so a binding comes back without a module being
copied or unloaded. The running IPython shell (`ip = get_ipython()`) is stored the same way,
as a call to `get_ipython()`, and a bare `object()` sentinel that a loaded module binds
(a library's marker, compared by identity) as that module's attribute.

A group is a dict of names to values pickled together, so names that share objects
(`b = a`, an element of a list also bound to a name) come back sharing them. Its serialized
form is a header (`MAGIC`, the buffer count, the pickle's length, each buffer's length), the
pickle, then the buffers; `digest_of` content-addresses that form.

Must never: raise anything but `SerializeError` while serializing. `loads` runs whatever the
pickle says: it is only ever handed bytes whose MAC verified (`variable_store.py`).
"""

from __future__ import annotations

import importlib
import io
import pickle
import struct
import sys
import types
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import cloudpickle
from cloudpickle import cloudpickle as _cp
from xxhash import xxh3_128

MAGIC = b"LGV2"
"""The authenticated format (a MAC trailer); `LGV1` blobs had none and are refused."""
HEADER = struct.Struct("<4sIQ")
LENGTH = struct.Struct("<Q")


class SerializeError(Exception):
    """A value could not be pickled; the message says why in a few words."""


@dataclass
class Pickled:
    """One group, pickled in memory except its out-of-band buffers (views, not copies)."""

    main: bytes
    buffers: list[memoryview]
    digest: str

    @property
    def size(self) -> int:
        return len(self.main) + sum(b.nbytes for b in self.buffers)


class _Pickler(cloudpickle.Pickler):
    """cloudpickle, except that a notebook function keeps the notebook as its globals.

    cloudpickle gives a by-value function a fresh globals dict holding copies of the names it
    reads, so a restored `def bump(): cfg['k'] += 1` would bump a private copy. Here such a
    function carries no globals at all and is rebound to the live namespace when loaded (and
    its digest does not change when the globals it reads do)."""

    def __init__(self, file: Any, namespace: Any, **kwargs: Any) -> None:
        super().__init__(file, protocol=5, **kwargs)
        self._namespace = namespace

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.ModuleType):
            return _module_reduce(obj)
        shell = _running_shell()
        if shell is not None and obj is shell:
            return _the_shell, ()
        if type(obj) is object:  # a bare sentinel: a library's, if one binds it at module level
            where = _sentinel_home(obj)
            if where is not None:
                return _module_attribute, where
        return super().reducer_override(obj)

    def _dynamic_function_reduce(self, func: types.FunctionType) -> Any:
        if self._namespace is None or func.__globals__ is not self._namespace:
            return super()._dynamic_function_reduce(func)
        code, _globals, name, argdefs, closure = self._function_getnewargs(func)
        state, slotstate = _cp._function_getstate(func)
        slotstate["__globals__"] = {}
        return (
            _notebook_function,
            (code, name, argdefs, closure),
            (state, slotstate),
            None,
            None,
            _notebook_function_setstate,
        )


def _module_reduce(module: types.ModuleType) -> Any:
    """A module as the import of its name; one that is not the module `sys.modules` holds
    under its name (made by hand, or replaced since) cannot be stored by reference."""
    name = getattr(module, "__name__", None)
    if not isinstance(name, str) or sys.modules.get(name) is not module:
        raise pickle.PicklingError(
            f"module {name!r} is not importable by its name (a module is never stored by value)"
        )
    return importlib.import_module, (name,)


def _sentinel_home(obj: object) -> tuple[str, str] | None:
    """The module and name a bare `object()` sentinel is bound to (`matplotlib.rcsetup`'s
    auto-backend marker in `rcParamsOrig`), so it comes back as that very object: a copy
    would fail the library's identity checks. Bare objects are rare in user data; the
    search looks at loaded modules' globals only."""
    for module_name, module in list(sys.modules.items()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict) or getattr(module, "__name__", None) != module_name:
            continue
        for attr, value in list(names.items()):
            if value is obj:
                return module_name, attr
    return None


def _module_attribute(module_name: str, attr: str) -> Any:
    return getattr(importlib.import_module(module_name), attr)


def _running_shell() -> Any:
    """The kernel's IPython shell, when one runs in this process (IPython not imported: None)."""
    module = sys.modules.get("IPython.core.interactiveshell")
    cls = getattr(module, "InteractiveShell", None)
    if cls is None or not cls.initialized():
        return None
    return cls.instance()


def _the_shell() -> Any:
    shell = _running_shell()
    if shell is None:
        raise RuntimeError("no IPython shell is running in this process")
    return shell


_BIND: list[MutableMapping[str, Any]] = []
"""The namespace notebook functions bind to while a group loads (top of the stack)."""


def _notebook_function(code: types.CodeType, name: str, argdefs: Any, closure: Any) -> Any:
    namespace = _BIND[-1] if _BIND else {"__builtins__": __builtins__}
    return types.FunctionType(code, namespace, name, argdefs, closure)  # type: ignore[arg-type]


def _notebook_function_setstate(obj: types.FunctionType, state: Any) -> None:
    state, slotstate = state
    obj.__dict__.update(state)
    slotstate.pop("__globals__", None)
    slotstate.pop("_cloudpickle_submodules", None)
    closure = slotstate.pop("__closure__", None)
    if closure is not None:
        for i, cell in enumerate(closure):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            obj.__closure__[i].cell_contents = value  # type: ignore[index]
    for key, value in slotstate.items():
        setattr(obj, key, value)


def pickle_group(values: dict[str, Any], namespace: Any = None, *, digest: bool = True) -> Pickled:
    """Pickle `values` together and hash the result; buffers stay in the objects' memory.
    Functions whose globals are `namespace` (the notebook's) are rebound to it on load."""
    buffers: list[memoryview] = []

    def keep(buffer: pickle.PickleBuffer) -> None:
        try:
            buffers.append(buffer.raw())
        except BufferError:  # not contiguous: let pickle copy it in band
            raise _InBand from None

    try:
        try:
            main = _dumps(values, namespace, keep)
        except _InBand:
            buffers.clear()
            main = _dumps(values, namespace, None)
    except RecursionError:
        raise SerializeError("too deeply nested to pickle") from None
    except Exception as exc:  # noqa: BLE001 - any failure of user code in __reduce__ is a reason
        raise SerializeError(_reason(exc)) from None
    pickled = Pickled(main, buffers, "")
    if digest:
        pickled.digest = digest_of(pickled)
    return pickled


def digest_of(pickled: Pickled) -> str:
    """The content address of a pickled group (releases the GIL while hashing buffers)."""
    # SHA-1 as git's object store: content addressing, not a defence against forgery; with
    # the CPU's SHA extensions it hashes a large buffer 2-3x faster than blake2b here.
    digest = xxh3_128()  # ~2x SHA-1 here: the hash bounds an in-place capture (README)
    digest.update(header(pickled.main, pickled.buffers))
    digest.update(pickled.main)
    for buffer in pickled.buffers:
        digest.update(buffer)
    return digest.hexdigest()


def _dumps(values: Any, namespace: Any, callback: Any) -> bytes:
    with io.BytesIO() as out:
        _Pickler(out, namespace, buffer_callback=callback).dump(values)
        return out.getvalue()


class _InBand(Exception):
    pass


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"cannot be pickled ({type(exc).__name__}: {text[:160]})"
        if text
        else (f"cannot be pickled ({type(exc).__name__})")
    )


def header(main: bytes, buffers: list[memoryview]) -> bytes:
    lengths = b"".join(LENGTH.pack(b.nbytes) for b in buffers)
    return HEADER.pack(MAGIC, len(buffers), len(main)) + lengths


def loads(
    main: bytes | memoryview, buffers: list[memoryview], namespace: MutableMapping[str, Any] | None
) -> Any:
    """Unpickle a group; notebook functions in it get `namespace` as their globals."""
    _BIND.append(namespace if namespace is not None else {"__builtins__": __builtins__})
    try:
        return pickle.loads(main, buffers=buffers)
    finally:
        _BIND.pop()
