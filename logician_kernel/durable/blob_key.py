"""The per-user secret that authenticates state the kernel writes and later reads back.

Anyone who can write the workspace can write `.logician/` (a cloned repository that committed
it, an unpacked archive, a shared volume, a second account in a world-writable folder). What
the kernel deserializes from there - pickled variable groups above all, since unpickling runs
code - must carry a MAC that only this user could have made. The key lives outside every
workspace, in the user config dir (`$LOGICIAN_CONFIG_DIR`, else platformdirs'), as
`state.key`: 32 random bytes, mode 0600, made on first use in one `link` (two kernels starting
at once agree on one key and neither reads a half-written file).

A key file that is not a regular file, not owned by this user, readable or writable by
group or others, or not 32 bytes long is refused, never repaired: a key someone else could
read forges blobs, and replacing it silently would hide that. The error names the path, what
is wrong and the fix.

Must never: log, print, repr or put into an exception the key's bytes; follow a symlink at
the key's path.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from blake3 import blake3

KEY_FILE = "state.key"
KEY_BYTES = 32
MAC_BYTES = 32
"""Keyed BLAKE3 (its `keyed_hash` mode, a MAC by design), 256-bit tags. Chosen for speed:
200 MB in 45 ms on this machine, against 117 ms for HMAC-SHA256 (with SHA-NI) and 309 ms for
keyed BLAKE2b (docs/security.md) - the MAC is on the path of every capture of a large value."""


class KeyFileError(OSError):
    """The key file cannot be used: `str()` names the path, what is wrong and the fix (said
    once, when the session opens); `strerror` only the path and what (beside each value)."""

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        super().__init__(errno.EPERM, f"the state key {path} {problem}")
        self.path = path
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.strerror}; {self.fix}"


_REMOVE = "remove it (a new key is made; values stored with the old one can no longer be restored)"


class BlobKey:
    """The key at `path`, loaded (or made) on first use and kept in memory only."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._secret: bytes | None = None

    @classmethod
    def in_dir(cls, config_dir: Path) -> BlobKey:
        return cls(Path(config_dir) / KEY_FILE)

    def __repr__(self) -> str:  # the secret never reaches a log or a traceback's locals dump
        return f"BlobKey({str(self.path)!r})"

    def mac(self, domain: bytes) -> blake3:
        """A fresh MAC (keyed BLAKE3) over `domain` - what kind of state it authenticates - so
        far; `update` it with the state, compare its `digest()` with `hmac.compare_digest`."""
        mac = blake3(key=self.secret())
        mac.update(domain)
        return mac

    def secret(self) -> bytes:
        """The key's bytes; raises `KeyFileError` (never anything with the bytes in it)."""
        if self._secret is None:
            self._secret = self._load() or self._create() or self._load_made_by_other()
        return self._secret

    def _load(self) -> bytes | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise KeyFileError(
                    self.path, "is a symbolic link", "remove it; a new key is made"
                ) from None
            raise KeyFileError(
                self.path,
                f"cannot be read ({exc.strerror})",
                "check the config directory's permissions",
            ) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise KeyFileError(self.path, "is not a regular file", "remove it")
            if st.st_uid != os.geteuid():
                raise KeyFileError(
                    self.path,
                    f"is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})",
                    _REMOVE,
                )
            if st.st_mode & 0o077:
                raise KeyFileError(
                    self.path,
                    f"is readable or writable by group or others "
                    f"(mode {stat.S_IMODE(st.st_mode):04o})",
                    f"{_REMOVE}, or `chmod 600` it if no one else could have read it",
                )
            data = os.read(fd, KEY_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) != KEY_BYTES:
            raise KeyFileError(
                self.path, f"holds {len(data)} bytes, not {KEY_BYTES} (damaged)", _REMOVE
            )
        return data

    def _create(self) -> bytes | None:
        """Make the key: a private temporary file, then one `link` to the final name, which
        fails if another kernel made it first (None: read theirs)."""
        parent = self.path.parent
        try:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise KeyFileError(
                self.path, f"cannot be created ({exc.strerror})", f"make {parent} writable"
            ) from None
        data = secrets.token_bytes(KEY_BYTES)
        tmp = parent / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            try:
                os.fchmod(fd, 0o600)  # whatever the umask
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                return None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                # No hard links here (some network/FUSE file systems): O_EXCL on the final name.
                if not _write_exclusive(self.path, data):
                    return None
        except KeyFileError:
            raise
        except OSError as exc:
            raise KeyFileError(
                self.path, f"cannot be created ({exc.strerror})", f"make {parent} writable"
            ) from None
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(parent)
        return data

    def _load_made_by_other(self) -> bytes:
        data = self._load()
        if data is None:  # made and removed again between our two looks
            raise KeyFileError(self.path, "vanished while it was being made", "retry")
        return data


def _write_exclusive(path: Path, data: bytes) -> bool:
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return  # the key is written; only its name's durability is at stake
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the key itself was synced
    finally:
        os.close(fd)
