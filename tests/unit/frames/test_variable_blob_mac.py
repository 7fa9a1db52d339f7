"""The variables store authenticates its blobs, and the state key that does it is the user's alone."""

from __future__ import annotations

import os
import pickle
import struct
import threading
from pathlib import Path

import pytest

from logician_kernel.durable.blob_key import KEY_BYTES, BlobKey, KeyFileError
from logician_kernel.frames.variable_store import (
    BlobRefused,
    VariableStore,
    pickle_group,
)


def store_at(tmp_path: Path, key_dir: str = "user-config") -> VariableStore:
    return VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / key_dir))


def blob_path(store: VariableStore, digest: str) -> Path:
    return store.root / "objects" / digest[:2] / digest[2:]


def test_a_written_blob_reads_back_and_carries_its_mac(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": 12345})
    store.write(pickled)
    raw = blob_path(store, pickled.digest).read_bytes()
    assert raw[:4] == b"LGV3"
    assert store.read(pickled.digest) == {"v": 12345}


@pytest.mark.parametrize("where", [0.5, -1, -40])
def test_one_changed_byte_anywhere_is_refused(tmp_path: Path, where: float) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": list(range(100))})
    store.write(pickled)
    path = blob_path(store, pickled.digest)
    raw = bytearray(path.read_bytes())
    raw[int(len(raw) * where) if isinstance(where, float) else where] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(BlobRefused, match="failed its check; not restored"):
        store.read(pickled.digest)


def test_a_valid_blob_moved_under_another_name_is_refused(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    a, b = pickle_group({"v": "a"}), pickle_group({"v": "b"})
    store.write(a)
    store.write(b)
    blob_path(store, a.digest).write_bytes(blob_path(store, b.digest).read_bytes())
    assert store.load(a.digest) == "stored value failed its check; not restored"


def test_a_blob_made_with_another_users_key_is_refused(tmp_path: Path) -> None:
    theirs, ours = store_at(tmp_path, "their-config"), store_at(tmp_path)
    pickled = pickle_group({"v": 1})
    theirs.write(pickled)
    with pytest.raises(BlobRefused, match="failed its check"):
        ours.read(pickled.digest)


def _marker_pickle(marker: Path) -> bytes:
    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (os.system, (f"touch {marker}",))

    return pickle.dumps({"v": Payload()}, protocol=5)


def test_an_old_unauthenticated_blob_is_refused_unread(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    marker = tmp_path / "PWNED"
    main = _marker_pickle(marker)
    digest = "ab" * 16
    path = blob_path(store, digest)
    path.parent.mkdir(parents=True)
    path.write_bytes(struct.pack("<4sIQ", b"LGV1", 0, len(main)) + main)
    reason = store.load(digest)
    assert reason == (
        "stored by an older version of Logician without a check, so it cannot "
        "be verified; not restored"
    )
    assert not marker.exists()


def test_a_file_preseeded_under_a_values_name_is_overwritten_not_trusted(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    marker = tmp_path / "PWNED"
    pickled = pickle_group({"v": 12345})
    main = _marker_pickle(marker)
    planted = struct.pack("<4sIQ", b"LGV2", 0, len(main)) + main + b"\0" * 32
    path = blob_path(store, pickled.digest)
    path.parent.mkdir(parents=True)
    path.write_bytes(planted)
    store.write(pickled)  # the dedup path: a file of that name exists
    assert path.read_bytes() != planted
    assert store.read(pickled.digest) == {"v": 12345}
    assert not marker.exists()


def test_a_verified_blob_is_not_rewritten(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": 1})
    store.write(pickled)
    inode = blob_path(store, pickled.digest).stat().st_ino
    fresh = store_at(tmp_path)  # another kernel: verifies the file instead of trusting its name
    fresh.write(pickle_group({"v": 1}))
    assert blob_path(store, pickled.digest).stat().st_ino == inode


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "ab", "AB" * 16, "zz" * 16])
def test_a_blob_name_that_is_not_a_digest_is_refused(tmp_path: Path, name: str) -> None:
    assert "invalid name" in str(store_at(tmp_path).load(name))


@pytest.mark.parametrize("size", [0, 3, 20, 50])
def test_a_truncated_blob_is_refused_with_a_reason(tmp_path: Path, size: int) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": "x" * 100})
    store.write(pickled)
    path = blob_path(store, pickled.digest)
    path.write_bytes(path.read_bytes()[:size])
    assert "failed its check" in str(store.load(pickled.digest))


def test_a_blob_path_that_is_a_symlink_or_fifo_is_refused(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": 1})
    store.write(pickled)
    path = blob_path(store, pickled.digest)
    outside = tmp_path / "outside"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    assert "cannot be read" in str(store.load(pickled.digest))
    path.unlink()
    os.mkfifo(path)
    assert "not restored" in str(store.load(pickled.digest))  # and it did not block


# -- the key file ----------------------------------------------------------------------------


def test_the_key_is_made_once_0600_and_kept_out_of_every_repr(tmp_path: Path) -> None:
    key = BlobKey.in_dir(tmp_path / "cfg" / "deeper")
    secret = key.secret()
    st = key.path.stat()
    assert (st.st_mode & 0o777, st.st_size, len(secret)) == (0o600, KEY_BYTES, KEY_BYTES)
    assert BlobKey(key.path).secret() == secret
    assert secret.hex() not in repr(key) and str(secret) not in repr(key)
    assert not [p for p in key.path.parent.iterdir() if p.name.endswith(".tmp")]


def test_kernels_starting_together_agree_on_one_key(tmp_path: Path) -> None:
    got: list[bytes] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        got.append(BlobKey.in_dir(tmp_path / "cfg").secret())

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o666])
def test_a_key_others_can_read_or_write_is_refused_naming_path_and_mode(
    tmp_path: Path, mode: int
) -> None:
    key = BlobKey.in_dir(tmp_path / "cfg")
    secret = key.secret()
    key.path.chmod(mode)
    with pytest.raises(KeyFileError) as err:
        BlobKey(key.path).secret()
    assert str(key.path) in str(err.value) and f"mode {mode:04o}" in str(err.value)
    assert "chmod 600" in str(err.value) and secret.hex() not in str(err.value)
    assert key.path.read_bytes() == secret  # refused, not replaced


def test_a_key_that_is_a_symlink_damaged_or_a_directory_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    real = tmp_path / "elsewhere.key"
    real.write_bytes(os.urandom(KEY_BYTES))
    real.chmod(0o600)
    key = BlobKey.in_dir(cfg)
    key.path.symlink_to(real)
    with pytest.raises(KeyFileError, match="symbolic link"):
        key.secret()
    key.path.unlink()
    key.path.write_bytes(b"short")
    key.path.chmod(0o600)
    with pytest.raises(KeyFileError, match="holds 5 bytes"):
        BlobKey(key.path).secret()
    key.path.unlink()
    key.path.mkdir()
    with pytest.raises(KeyFileError, match="not a regular file"):
        BlobKey(key.path).secret()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_a_key_owned_by_another_account_is_refused(tmp_path: Path) -> None:
    key = BlobKey.in_dir(tmp_path / "cfg")
    key.secret()
    os.chown(key.path, 65534, -1)
    with pytest.raises(KeyFileError, match="owned by uid 65534, not by you"):
        BlobKey(key.path).secret()


def test_a_refused_key_stores_nothing_and_says_why(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.key.secret()
    store.key.path.chmod(0o644)
    store = store_at(tmp_path)
    with pytest.raises(KeyFileError):
        store.write(pickle_group({"v": 1}))
    assert not list((tmp_path / "variables").rglob("*")) or not any(
        p.is_file() for p in (tmp_path / "variables").rglob("*")
    )


def test_a_header_claiming_huge_sizes_is_refused_before_anything_is_sized_by_it(
    tmp_path: Path,
) -> None:
    store = store_at(tmp_path)
    digest = "cd" * 16
    path = blob_path(store, digest)
    path.parent.mkdir(parents=True)
    path.write_bytes(struct.pack("<4sIQ", b"LGV2", 2**32 - 1, 2**63) + b"\0" * 64)
    assert "failed its check" in str(store.load(digest))


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_a_blob_owned_by_another_account_is_refused(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": 1})
    store.write(pickled)
    os.chown(blob_path(store, pickled.digest), 65534, -1)
    assert "owned by uid 65534, not by you" in str(store_at(tmp_path).load(pickled.digest))


@pytest.mark.parametrize("kind", ["in-band", "out-of-band"])
def test_a_large_mapped_blob_round_trips_and_a_flipped_byte_is_refused(
    tmp_path: Path, kind: str
) -> None:
    store = store_at(tmp_path)
    if kind == "in-band":  # a pickle stream that is itself mapped (>= MAP_FROM)
        value: object = bytearray(os.urandom(3 << 20))
    else:
        np = pytest.importorskip("numpy")
        value = np.frombuffer(os.urandom(3 << 20), dtype=np.uint8).copy()
    pickled = pickle_group({"v": value})
    assert bool(pickled.buffers) == (kind == "out-of-band")
    store.write(pickled)
    assert bytes(store.read(pickled.digest)["v"]) == bytes(value)
    path = blob_path(store, pickled.digest)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x80
    path.write_bytes(bytes(raw))
    assert store_at(tmp_path).load(pickled.digest) == REFUSED


REFUSED = "stored value failed its check; not restored"


def test_a_symlinked_bucket_is_not_written_through(tmp_path: Path) -> None:
    """A planted `objects/<xx>` symlink to a folder elsewhere: no blob lands there and its
    permission bits are not tightened (private_dir would chmod through the link)."""
    store = store_at(tmp_path)
    pickled = pickle_group({"v": 7})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    elsewhere.chmod(0o755)
    bucket = blob_path(store, pickled.digest).parent
    bucket.parent.mkdir(parents=True)
    bucket.symlink_to(elsewhere)
    with pytest.raises(OSError, match="symbolic link"):
        store.write(pickled)
    assert list(elsewhere.iterdir()) == [] and elsewhere.stat().st_mode & 0o777 == 0o755
