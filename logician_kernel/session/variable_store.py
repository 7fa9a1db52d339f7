"""The variables store: kernel values serialized once, content-addressed under `.logician/`.

Values are pickled with protocol 5 through cloudpickle (so notebook-defined functions,
lambdas, closures and classes are stored by value and survive a kernel restart). Large
buffers (numpy arrays, pandas blocks, bytes-like objects) go out of band: they are hashed and
written straight from the object's own memory, never copied into one big byte string, and
read back into one buffer that the restored arrays share.

A blob holds a *group*: a dict of names to values pickled together, so names that share
objects (`b = a`, an element of a list also bound to a name) come back sharing them.

Must never: raise anything but `SerializeError` while serializing, or leave a partial blob
under its final name.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import struct
import threading
import types
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cloudpickle
from cloudpickle import cloudpickle as _cp
from xxhash import xxh3_128

from .._durable import durable_replace
from ._private import open_private, private_dir

MAGIC = b"LGV1"

MAP_FROM = 1024 * 1024
"""Blobs from this size on are mapped, not read: a large array comes back without a copy."""
_HEADER = struct.Struct("<4sIQ")
_LENGTH = struct.Struct("<Q")


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

    def _dynamic_function_reduce(self, func: types.FunctionType) -> Any:
        if self._namespace is None or func.__globals__ is not self._namespace:
            return super()._dynamic_function_reduce(func)
        code, _globals, name, argdefs, closure = self._function_getnewargs(func)
        state, slotstate = _cp._function_getstate(func)
        slotstate["__globals__"] = {}
        return (_notebook_function, (code, name, argdefs, closure), (state, slotstate),
                None, None, _notebook_function_setstate)  # fmt: skip


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
    digest.update(_header(pickled.main, pickled.buffers))
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


def _header(main: bytes, buffers: list[memoryview]) -> bytes:
    lengths = b"".join(_LENGTH.pack(b.nbytes) for b in buffers)
    return _HEADER.pack(MAGIC, len(buffers), len(main)) + lengths


class VariableStore:
    """Blobs of pickled groups, by digest, under one directory (`.logician/variables`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, digest: str) -> Path:
        return self.root / "objects" / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def speculate(self, pickled: Pickled) -> SpeculativeWrite:
        """Start writing a group whose digest is not known yet, on a thread: the caller hashes
        it meanwhile (both release the GIL), then `keep`s or `drop`s the write. A large
        array mutated in place costs about one write, not a hash and then a write."""
        private_dir(self.root)
        return SpeculativeWrite(self, pickled)

    def write(self, pickled: Pickled) -> None:
        """Store a group once: the same content stored twice costs once."""
        final = self._path(pickled.digest)
        if final.exists():
            return
        private_dir(final.parent)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                fh.write(_header(pickled.main, pickled.buffers))
                fh.write(pickled.main)
                for buffer in pickled.buffers:
                    fh.write(buffer)
            durable_replace(tmp, final)  # counted: a test can fail the store's Nth write
        finally:
            tmp.unlink(missing_ok=True)

    def read(
        self, digest: str, namespace: MutableMapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The group stored under `digest`; buffers share one read of the file. Notebook
        functions in it get `namespace` as their globals."""
        path = self._path(digest)
        with open(path, "rb", buffering=0) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size >= MAP_FROM:
                # A private copy-on-write mapping: the restored buffers page in from the page
                # cache as they are touched, and the blob is never written (objects are
                # immutable; eviction unlinks, which leaves a live mapping valid).
                data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
                view = memoryview(data)
            else:
                data = bytearray(size)
                view = memoryview(data)
                got = 0
                while got < size:
                    n = fh.readinto(view[got:])
                    if not n:
                        raise OSError(f"{path}: truncated")
                    got += n
        if size < _HEADER.size:
            raise OSError(f"{path}: truncated")
        magic, count, main_len = _HEADER.unpack_from(data, 0)
        if magic != MAGIC:
            raise OSError(f"{path}: not a variables blob")
        offset = _HEADER.size
        lengths = [_LENGTH.unpack_from(data, offset + i * _LENGTH.size)[0] for i in range(count)]
        offset += count * _LENGTH.size
        main = view[offset : offset + main_len]
        offset += main_len
        buffers = []
        for length in lengths:
            buffers.append(view[offset : offset + length])
            offset += length
        _BIND.append(namespace if namespace is not None else {"__builtins__": __builtins__})
        try:
            values = pickle.loads(main, buffers=buffers)
        finally:
            _BIND.pop()
        if not isinstance(values, dict):
            raise OSError(f"{path}: not a variables group")
        return values


class SpeculativeWrite:
    """A group being written to a temporary file before its digest is known."""

    CHUNK = 8 * 1024 * 1024

    def __init__(self, store: VariableStore, pickled: Pickled) -> None:
        self.store = store
        self.tmp = store.root / f".speculative.{os.getpid()}.{threading.get_ident()}.tmp"
        self.error: OSError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._write, args=(pickled,), daemon=True,
                                        name="logician-variables-write")  # fmt: skip
        self._thread.start()

    def _write(self, pickled: Pickled) -> None:
        try:
            with os.fdopen(open_private(self.tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                fh.write(_header(pickled.main, pickled.buffers))
                fh.write(pickled.main)
                for buffer in pickled.buffers:
                    view = buffer.cast("B") if buffer.format != "B" or buffer.ndim != 1 else buffer
                    for start in range(0, view.nbytes, self.CHUNK):
                        if self._stop.is_set():
                            return
                        fh.write(view[start : start + self.CHUNK])
        except OSError as exc:
            self.error = exc

    def keep(self, digest: str) -> bool:
        """The value changed: finish the write under its digest. False if it failed."""
        self._thread.join()
        final = self.store._path(digest)
        try:
            if self.error is None and not final.exists():
                private_dir(final.parent)
                durable_replace(self.tmp, final)
            return self.error is None
        except OSError as exc:  # a full disk at the rename: the caller's own write retries
            self.error = exc
            return False
        finally:
            self.tmp.unlink(missing_ok=True)

    def drop(self) -> None:
        """The value did not change: stop and remove the partial write."""
        self._stop.set()
        self._thread.join()
        self.tmp.unlink(missing_ok=True)
