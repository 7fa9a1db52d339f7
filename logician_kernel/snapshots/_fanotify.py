"""The two Linux interfaces the exact attribution mechanism stands on, through ctypes and a
netlink socket: a fanotify group that reports each filesystem event with the writer's pid and
the directory handle + name it touched, and the kernel's process connector (the fork log), so
a writer that exited before its event was read still has an ancestry.

Both need root (`CAP_SYS_ADMIN`, `CAP_NET_ADMIN`); constructing either raises `OSError` where the
machine does not allow it, and `tree_watch.py` then falls back.

Must never: block (both descriptors are non-blocking), or leave a filesystem mark behind when
asked to remove it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import struct

_FAN_CLOEXEC, _FAN_NONBLOCK = 0x1, 0x2
_FAN_REPORT_FID, _FAN_REPORT_DIR_FID, _FAN_REPORT_NAME = 0x200, 0x400, 0x800
_FAN_MARK_ADD, _FAN_MARK_REMOVE, _FAN_MARK_FILESYSTEM = 0x1, 0x2, 0x100
_FAN_MASK = (
    0x2  # FAN_MODIFY
    | 0x4  # FAN_ATTRIB
    | 0x8  # FAN_CLOSE_WRITE
    | 0x40  # FAN_MOVED_FROM
    | 0x80  # FAN_MOVED_TO
    | 0x100  # FAN_CREATE
    | 0x200  # FAN_DELETE
    | 0x40000000  # FAN_ONDIR
)
_FAN_Q_OVERFLOW = 0x4000
_INFO_NAMES = (2, 10, 12)  # DFID_NAME, OLD_DFID_NAME, NEW_DFID_NAME
_AT_FDCWD = -100
_O_PATH = getattr(os, "O_PATH", 0o10000000)
_EVENT = struct.Struct("=IBBHQii")  # struct fanotify_event_metadata
_INFO = struct.Struct("=BBH")  # struct fanotify_event_info_header
_HANDLE_BYTES = struct.Struct("=I")  # struct file_handle's handle_bytes


class ForkLog:
    """The kernel's process connector (netlink, root only): every fork on the machine with its
    parent, so a writer that exited before its event was read still has an ancestry."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11)  # NETLINK_CONNECTOR
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setblocking(False)
        self.sock.bind((0, 1))  # CN_IDX_PROC
        self.listen(True)
        self.listen(False)

    def listen(self, on: bool) -> None:
        op = struct.pack("=IIIIHHI", 1, 1, 0, 0, 4, 0, 1 if on else 2)  # PROC_CN_MCAST_LISTEN
        self.sock.send(struct.pack("=IHHII", 16 + len(op), 3, 0, 0, 0) + op)

    def read(self, forks: dict[int, int]) -> bool:
        """Add the queued forks (child process -> parent process); False when some were lost."""
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except BlockingIOError:
                return True
            except OSError as exc:  # ENOBUFS: the machine forked faster than we read
                return exc.errno != errno.ENOBUFS
            off = 0
            while off + 68 <= len(data):
                size = struct.unpack_from("=I", data, off)[0]
                if struct.unpack_from("=I", data, off + 36)[0] == 1:  # PROC_EVENT_FORK
                    _pp, ptgid, cpid, ctgid = struct.unpack_from("=IIII", data, off + 52)
                    if cpid == ctgid:  # a process, not a thread
                        forks[ctgid] = ptgid
                off += max(16, (size + 3) & ~3)

    def close(self) -> None:
        self.sock.close()


class Fanotify:
    """A fanotify group reporting directory handle + name, marked over a filesystem per frame."""

    def __init__(self, root: str) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fanotify_mark.argtypes = [
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint64,
            ctypes.c_int,
            ctypes.c_char_p,
        ]
        self._libc = libc
        flags = (
            _FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_REPORT_FID | _FAN_REPORT_DIR_FID | _FAN_REPORT_NAME
        )
        fd = libc.fanotify_init(flags, os.O_RDONLY)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"fanotify_init: {os.strerror(err)}")
        self.fd = fd
        self.root = root
        self._mount = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._dirs: dict[bytes, str | None] = {}
        self.mark(add=True)  # the probe: EPERM/EINVAL here means the machine does not allow it
        self.mark(add=False)

    def mark(self, *, add: bool) -> None:
        how = (_FAN_MARK_ADD if add else _FAN_MARK_REMOVE) | _FAN_MARK_FILESYSTEM
        if self._libc.fanotify_mark(self.fd, how, _FAN_MASK, _AT_FDCWD, os.fsencode(self.root)):
            err = ctypes.get_errno()
            raise OSError(err, f"fanotify_mark: {os.strerror(err)}")

    def forget_dirs(self, root: str) -> None:
        """A new frame over `root`: directory names may have changed since the last, and the
        workspace may be another (on another file system: marked and resolved there)."""
        self._dirs.clear()
        if root != self.root:
            mount = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            os.close(self._mount)
            self.root, self._mount = root, mount

    def read(self) -> tuple[list[tuple[int, str]], bool]:
        """(pid, full path) of the queued events, and whether the queue overflowed."""
        out: list[tuple[int, str]] = []
        lost = False
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out, lost
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                return out, lost
            if not buf:
                return out, lost
            off = 0
            while off + 24 <= len(buf):
                size, _v, _r, meta, mask, efd, pid = _EVENT.unpack_from(buf, off)
                if size < 24:
                    break
                if efd >= 0:
                    os.close(efd)
                if mask & _FAN_Q_OVERFLOW:
                    lost = True
                info, end = off + meta, off + size
                while info + 4 <= end:
                    kind, _pad, length = _INFO.unpack_from(buf, info)
                    if length < 4:
                        break
                    if kind in _INFO_NAMES:
                        path = self._path(buf, info + 4 + 8, info + length)
                        if path is not None:
                            out.append((pid, path))
                    info += length
                off += size

    def _path(self, buf: bytes, handle_at: int, end: int) -> str | None:
        hbytes = _HANDLE_BYTES.unpack_from(buf, handle_at)[0]
        handle = buf[handle_at : handle_at + 8 + hbytes]
        name = buf[handle_at + 8 + hbytes : end].split(b"\0", 1)[0]
        try:
            directory = self._dirs[handle]
        except KeyError:
            directory = self._dirs[handle] = self._resolve(handle)
        if directory is None or name in (b"", b"."):
            return directory
        return f"{directory}/{os.fsdecode(name)}" if directory != "/" else f"/{os.fsdecode(name)}"

    def _resolve(self, handle: bytes) -> str | None:
        raw = ctypes.create_string_buffer(handle, len(handle))
        fd = self._libc.open_by_handle_at(self._mount, raw, _O_PATH | os.O_CLOEXEC)
        if fd < 0:
            return None  # ESTALE: the directory is gone
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        finally:
            os.close(fd)

    def close(self) -> None:
        for fd in (self.fd, self._mount):
            try:
                os.close(fd)
            except OSError:
                pass
