"""A thread's lease: one writer per thread across hosts, where `flock` is local to each host.

An OS lock on a network file system is only as good as the client's lock support: over sshfs
(and NFSv3 `nolock`) a `flock` is local to each client, so two kernels on two hosts both "hold"
one thread and interleave its ledger. The lease is a file beside the ledger
(`<thread>.lease`), created with `O_EXCL` (atomic on NFS and over SFTP) and holding the
holder's host, pid, boot id (`/proc/sys/kernel/random/boot_id`), a random `nonce`, a fencing
`token` (one more than the lease it replaced) and a heartbeat time that a daemon thread
rewrites in place every `heartbeat` seconds through the holder's own descriptor.

Another kernel takes a lease over only when it is stale: released by its holder; or its
heartbeat is older than `stale_after` seconds (by the taker's clock: the hosts' clocks must
agree to within a fraction of that); or it is on this host and its pid is gone or the boot id
differs (a killed kernel on the same host is taken over at once), or it is this very process's
(which holds the thread's local lock: an earlier open in it was never closed). A takeover renames the old
file aside (of two takers, one wins the rename), reads it again, and creates its own with
`O_EXCL`. Before every ledger append the holder reads the lease at its path (`check`): a
nonce or token not its own means the thread was taken over, and `LeaseLost` refuses the append
with who took it. The file's content is a fixed size, so a client that caches file sizes
(sshfs) still reads all of it.

Must never: take over a lease that is fresh, write a lease file that is not its own (the
heartbeat writes through the descriptor the holder created, so after a takeover it lands in
the renamed-aside file), or let a holder that lost its lease append.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .journal import JournalError
from .private import PRIVATE_FILE, private_dir

HEARTBEAT_SECONDS = 5.0
"""How often a holder refreshes its lease."""
STALE_AFTER_SECONDS = 30.0
"""A lease whose heartbeat is older than this is taken as abandoned by its host."""
TEST_HOST = "LOGICIAN_TEST_HOST"
"""Test-only: this process's host identity (its boot id is derived from it, and its thread's
flock is its own, as each client's is on a network mount), so one machine can play two hosts
sharing one folder. Never set outside tests."""
TEST_STALE = "LOGICIAN_TEST_LEASE_STALE_SECONDS"
"""Test-only: `stale_after` for this process (its heartbeat is a sixth of it)."""
_SIZE = 511  # + "\n": the file never changes size, whatever the fields hold


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""  # not Linux: only the heartbeat then tells a dead holder on this host


@dataclass(frozen=True)
class Identity:
    """Who a kernel is, as a lease records it."""

    host: str
    boot_id: str
    pid: int

    @classmethod
    def here(cls, env: dict[str, str] | None = None) -> Identity:
        env = dict(os.environ) if env is None else env
        if host := env.get(TEST_HOST, "").strip():
            return cls(host, f"test-boot-{host}", os.getpid())
        return cls(socket.gethostname(), boot_id(), os.getpid())


@dataclass(frozen=True)
class LeaseRecord:
    """A lease file's content."""

    host: str
    boot_id: str
    pid: int
    nonce: str
    token: int
    heartbeat: float
    """The holder's clock at its last heartbeat (0 once released)."""
    released: bool = False
    ledger_bytes: int = 0
    """The thread ledger's length as its holder last saw it (at each heartbeat and at
    release): a taker whose view of the file is shorter sees a cached, older copy."""

    def describe(self) -> str:
        return f"the kernel pid {self.pid} on host {self.host}"

    def encode(self) -> bytes:
        data = json.dumps(asdict(self), sort_keys=True).encode()
        if len(data) > _SIZE:
            raise ValueError(f"lease record too long ({len(data)} bytes)")
        return data.ljust(_SIZE) + b"\n"

    @classmethod
    def decode(cls, data: bytes) -> LeaseRecord | None:
        try:
            fields = json.loads(data.decode())
            return cls(
                host=str(fields["host"]),
                boot_id=str(fields["boot_id"]),
                pid=int(fields["pid"]),
                nonce=str(fields["nonce"]),
                token=int(fields["token"]),
                heartbeat=float(fields["heartbeat"]),
                released=bool(fields.get("released", False)),
                ledger_bytes=int(fields.get("ledger_bytes", 0)),
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None  # torn by a concurrent rewrite, or not ours: judged by its age


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists on this host (another account's counts: it is alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another account's live process
    return True


def stale_reason(
    record: LeaseRecord | None, mtime: float, me: Identity, stale_after: float, now: float
) -> str | None:
    """Why the lease may be taken over, or None while its holder is alive (module docstring)."""
    if record is None:
        age = now - mtime
        return f"its content is unreadable and {age:.0f} s old" if age > stale_after else None
    if record.released:
        return "its holder released it"
    if record.heartbeat == 0:
        return "its holder gave it up without writing"
    age = now - record.heartbeat
    if age > stale_after:
        return f"no heartbeat for {age:.0f} s (stale after {stale_after:.0f} s)"
    if record.host == me.host:
        if record.boot_id != me.boot_id:
            return "its host has restarted since"
        if record.pid == me.pid:
            # This very process, which holds the thread's local lock now: the lease is a
            # leftover of an earlier open in it that was never closed.
            return "it is this process's own, left by an earlier open"
        if not pid_alive(record.pid):
            return f"process {record.pid} is gone"
    return None


class LeaseHeld(RuntimeError):
    """A live kernel holds the lease; carries its record."""

    def __init__(self, path: Path, holder: LeaseRecord | None, age: float) -> None:
        who = holder.describe() if holder else "another kernel"
        super().__init__(f"{path.name} is held by {who} (heartbeat {age:.0f} s ago)")
        self.path = path
        self.holder = holder
        self.age = age


class LeaseLost(JournalError):
    """This kernel's lease was taken over: it must not append to the thread any more."""


def _read(path: Path) -> tuple[LeaseRecord | None, float]:
    """The record at `path` and the file's mtime; FileNotFoundError when there is none."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        data = os.read(fd, _SIZE + 1)
        mtime = os.fstat(fd).st_mtime
    finally:
        os.close(fd)
    return LeaseRecord.decode(data), mtime


def read_lease(path: Path) -> LeaseRecord | None:
    """The lease at `path` as it is, or None (no file, or unreadable)."""
    try:
        return _read(path)[0]
    except OSError:
        return None


def live_holder(path: Path, env: dict[str, str] | None = None) -> LeaseRecord | None:
    """The kernel holding the lease at `path` now, or None (none, released or stale)."""
    try:
        record, mtime = _read(path)
    except OSError:
        return None
    me = Identity.here(env)
    if stale_reason(record, mtime, me, stale_seconds(env), time.time()) is not None:
        return None
    return record


def stale_seconds(env: dict[str, str] | None = None) -> float:
    env = dict(os.environ) if env is None else env
    try:
        return float(env.get(TEST_STALE, "") or STALE_AFTER_SECONDS)
    except ValueError:
        return STALE_AFTER_SECONDS


class ThreadLease:
    """A lease this kernel holds, kept fresh by a daemon thread until `release`."""

    def __init__(
        self,
        path: Path,
        fd: int,
        record: LeaseRecord,
        *,
        heartbeat: float,
        taken_from: LeaseRecord | None,
        taken_because: str | None,
    ) -> None:
        self.path = path
        self.record = record
        self.taken_from = taken_from
        """The stale lease this one replaced, if any."""
        self.taken_because = taken_because
        """Why it was stale."""
        self.lost: str | None = None
        """Set once this kernel learns the lease was taken over: what the user is told."""
        self.progress: Callable[[], int] | None = None
        """The ledger's length now; recorded with each heartbeat (`LeaseRecord.ledger_bytes`)."""
        self._fd = fd
        self._interval = heartbeat
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._run, name="logician-lease", daemon=True)
        self._beat.start()

    @classmethod
    def acquire(
        cls,
        path: Path,
        *,
        env: dict[str, str] | None = None,
        stale_after: float | None = None,
        heartbeat: float | None = None,
    ) -> ThreadLease:
        """Take the lease at `path`: a new one, or one that is stale; `LeaseHeld` otherwise."""
        path = Path(path)
        me = Identity.here(env)
        stale_after = stale_seconds(env) if stale_after is None else stale_after
        heartbeat = heartbeat if heartbeat is not None else min(HEARTBEAT_SECONDS, stale_after / 6)
        previous: LeaseRecord | None = None
        because: str | None = None
        for _ in range(5):  # another kernel may create or take it between our steps
            try:
                fd, record = cls._create(path, me, (previous.token if previous else 0) + 1)
            except FileExistsError:
                pass
            else:
                return cls(
                    path,
                    fd,
                    record,
                    heartbeat=heartbeat,
                    taken_from=previous,
                    taken_because=because,
                )
            try:
                current, mtime = _read(path)
            except FileNotFoundError:
                continue
            now = time.time()
            because = stale_reason(current, mtime, me, stale_after, now)
            if because is None:
                age = now - current.heartbeat if current else now - mtime
                raise LeaseHeld(path, current, age)
            aside = path.with_name(f"{path.name}.taken-{secrets.token_hex(4)}")
            try:
                os.rename(path, aside)
            except FileNotFoundError:
                continue  # another kernel took it first; look again
            try:
                moved, _ = _read(aside)
            finally:
                try:
                    os.unlink(aside)
                except OSError:
                    pass  # a leftover aside file is only clutter
            previous = moved or current
        raise LeaseHeld(path, None, 0.0)

    @staticmethod
    def _create(path: Path, me: Identity, token: int) -> tuple[int, LeaseRecord]:
        # O_DSYNC: each heartbeat reaches the server as it is written (an NFS client would
        # otherwise hold it in its cache, and other hosts see a holder that looks dead),
        # without an fsync call per beat.
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_DSYNC
        fd = os.open(path, flags, PRIVATE_FILE)
        record = LeaseRecord(
            host=me.host,
            boot_id=me.boot_id,
            pid=me.pid,
            nonce=secrets.token_hex(8),
            token=token,
            heartbeat=time.time(),
        )
        try:
            os.pwrite(fd, record.encode(), 0)
        except OSError:
            os.close(fd)
            os.unlink(path)
            raise
        return fd, record

    def _write(self, record: LeaseRecord) -> None:
        with self._write_lock:
            if self._fd < 0:
                return
            os.pwrite(self._fd, record.encode(), 0)
            self.record = record

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if self.lost is not None:
                return
            try:
                self.check()
                self._write(
                    replace(self.record, heartbeat=time.time(), ledger_bytes=self._length())
                )
            except LeaseLost:
                return
            except OSError:
                continue  # a network blip: the next beat tries again; a long one lets it go stale

    def _length(self) -> int:
        try:
            return self.progress() if self.progress is not None else self.record.ledger_bytes
        except Exception:  # noqa: BLE001 - a closed journal: keep what was recorded
            return self.record.ledger_bytes

    def check(self) -> None:
        """Raise `LeaseLost` unless the lease at the path is still this kernel's."""
        if self.lost is not None:
            raise LeaseLost(self.lost)
        try:
            current, _ = _read(self.path)
        except FileNotFoundError:
            if self._write_again():
                return
            current = None
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.ENOTCONN, errno.ESTALE):
                raise LeaseLost(
                    f"the lease {self.path} cannot be read ({exc.strerror}); this kernel "
                    "stops writing the thread until it can be sure no one else does"
                ) from None
            raise
        mine = self.record
        if current is not None and (current.nonce, current.token) == (mine.nonce, mine.token):
            return
        who = current.describe() if current else "another kernel (its lease is gone)"
        token = f" with fencing token {current.token}" if current else ""
        self.lost = (
            f"thread {self.path.name.removesuffix('.lease')!r} was taken over by {who}{token} "
            f"(this kernel held token {mine.token}; its heartbeat had stopped long enough to look "
            "dead); this kernel no longer writes that thread, so the two never interleave: "
            "restart the kernel, or `%logician thread new NAME` to keep recording here"
        )
        raise LeaseLost(self.lost)

    def _write_again(self) -> bool:
        """The lease file vanished while this kernel held it (its folder was deleted, as when
        a user removes `.logician/`; a kernel that takes a thread over leaves a lease of its
        own): write it again with `O_EXCL`, keeping this kernel's nonce and token. False when
        another kernel created one first."""
        try:
            private_dir(self.path.parent)
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_DSYNC
            fd = os.open(self.path, flags, PRIVATE_FILE)
        except FileExistsError:
            return False
        with self._write_lock:
            old, self._fd = self._fd, fd
            if old >= 0:
                os.close(old)
            os.pwrite(fd, self.record.encode(), 0)
        return True

    def abandon(self) -> None:
        """Give the lease up without having written, keeping what the previous holder said
        of the ledger's length (`ledger_bytes`), so the next taker checks its view again."""
        self._stop.set()
        left = self.taken_from.ledger_bytes if self.taken_from is not None else 0
        try:
            self._write(replace(self.record, heartbeat=0.0, ledger_bytes=left))
        except OSError:
            pass  # it goes stale by itself
        with self._write_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def release(self) -> None:
        """Stop the heartbeat and mark the lease released (its token stays for the next)."""
        self._stop.set()
        if self._beat.is_alive() and self._beat is not threading.current_thread():
            self._beat.join(timeout=5)
        try:
            if self.lost is None:
                self.check()
                self._write(
                    replace(self.record, heartbeat=0.0, released=True, ledger_bytes=self._length())
                )
        except OSError:
            pass  # lost, or the mount is gone: a stale lease is taken over anyway
        with self._write_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
