"""Two kernels on one thread through a real network mount: one on the folder itself, one on an
sshfs mount of it served by a loopback sshd. An flock taken through the mount does not see one
taken on the folder (each client's locks are its own), so only the lease keeps them apart: the
second kernel is told and records its own thread, the shared ledger checks clean, and once the
holder is killed with -9 a kernel on the mount takes the thread over.

Needs root, sshd, sshfs and /dev/fuse; skipped with the reason where the suite cannot mount."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Kernel, git
from test_kernel_thread_lease import _assert_clean, _ledger

pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _skip_unless_mountable() -> tuple[str, str]:
    if os.geteuid() != 0:
        pytest.skip("an sshfs mount of a loopback sshd needs root here (sshd, FUSE)")
    sshd, sshfs = shutil.which("sshd") or "/usr/sbin/sshd", shutil.which("sshfs")
    if not os.path.exists(sshd) or sshfs is None:
        pytest.skip("needs sshd and sshfs (apt-get install -y openssh-server sshfs)")
    if not os.path.exists("/dev/fuse"):
        pytest.skip("needs /dev/fuse for an sshfs mount")
    return sshd, sshfs


@pytest.fixture
def sshfs_mount(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(served folder, its sshfs mount), unmounted and sshd stopped after the test."""
    sshd, sshfs = _skip_unless_mountable()
    keys = Path(tempfile.mkdtemp(prefix="lk-sshd-"))
    for name in ("host", "user"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)],
            check=True,
            timeout=60,
        )
    (keys / "authorized_keys").write_bytes((keys / "user.pub").read_bytes())
    port = _free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nUsePAM no\nPidFile {keys / 'sshd.pid'}\n"
        "Subsystem sftp internal-sftp\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
    log = keys / "sshd.log"
    with open(log, "wb") as err:
        daemon = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stderr=err)
    served = tmp_path / "project"
    served.mkdir()
    mount = tmp_path / "mnt"
    mount.mkdir()
    mounted = False
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if daemon.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"the loopback sshd did not start: {log.read_text()[-500:]}")
            time.sleep(0.1)
        options = (
            f"IdentityFile={keys / 'user'},StrictHostKeyChecking=no,"
            # cache=no: this test uses the folder through both paths on one host, the one case
            # where sshfs's size cache lets a taker see an older ledger (docs/deploy.md).
            "UserKnownHostsFile=/dev/null,BatchMode=yes,cache=no"
        )
        done = subprocess.run(
            [sshfs, "-p", str(port), "-o", options, f"root@127.0.0.1:{served}", str(mount)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            pytest.skip(f"sshfs could not mount here: {done.stderr.strip()[-500:]}")
        mounted = True
        yield served, mount
    finally:
        if mounted:
            subprocess.run(["fusermount", "-u", "-z", str(mount)], check=False, timeout=60)
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(keys, ignore_errors=True)


def test_two_kernels_through_sshfs_never_share_a_thread(
    sshfs_mount: tuple[Path, Path], kernel_env: dict[str, str]
) -> None:
    served, mount = sshfs_mount
    git(served, "init", "-q", "-b", "main")
    (served / "data.csv").write_text("a,b\n")
    thread = kernel_env["LOGICIAN_THREAD"]
    a = Kernel(served, kernel_env)
    b: Kernel | None = None
    c: Kernel | None = None
    try:
        assert a.run("open('a.txt', 'w').write('a')").status == "ok"
        b = Kernel(mount, kernel_env)
        first = b.run("open('b.txt', 'w').write('b')")
        assert first.status == "ok", first.text
        assert f"thread {thread!r} is held by the kernel pid" in first.stderr, first.stderr
        assert "records a thread of its own" in first.stderr
        assert f"{thread}: held by" in b.run("%logician threads").text
        assert a.run("open('a.txt', 'a').write('2')").status == "ok"
        assert b.run("open('b.txt', 'a').write('2')").status == "ok"
        _assert_clean(_ledger(served, thread))
        b.shutdown()
        b = None

        # The holder dies; a kernel on the mount (this host: the pid is gone) takes over.
        a.kill9()
        c = Kernel(mount, kernel_env)
        took = c.run("open('c.txt', 'w').write('c')")
        assert took.status == "ok", took.text
        assert f"took thread {thread!r} over from the kernel pid" in took.stderr, took.stderr
        assert "is gone" in took.stderr
        frames = c.run("%logician frames").text
        assert "a.txt" in frames and "c.txt" in frames, frames
        _assert_clean(_ledger(served, thread))
    finally:
        for k in (c, b):
            if k is not None:
                k.shutdown()
        try:
            a.shutdown()
        except Exception:  # noqa: BLE001 - killed above; its manager may already be gone
            pass
