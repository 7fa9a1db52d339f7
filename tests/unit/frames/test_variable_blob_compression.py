"""Variable blobs are compressed where that pays, stay authenticated, are stored once per value,
and blobs of the previous (uncompressed) format still read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.durable.blob_key import BlobKey
from logician_kernel.frames import variable_codec
from logician_kernel.frames.variable_pickle import header
from logician_kernel.frames.variable_store import BlobRefused, VariableStore, pickle_group

np = pytest.importorskip("numpy")
pytest.importorskip("zstandard")


def store_at(tmp_path: Path) -> VariableStore:
    return VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / "user-config"))


def blob_path(store: VariableStore, digest: str) -> Path:
    return store.root / "objects" / digest[:2] / digest[2:]


def table_like() -> object:
    """A column of repetitive values, like a real table's (prices with two decimals)."""
    rng = np.random.default_rng(0)
    return np.round(rng.normal(100, 15, 400_000), 2).astype(np.float32).astype(np.float64)


def test_a_compressible_array_is_stored_smaller_and_comes_back_equal_and_writable(
    tmp_path: Path,
) -> None:
    store = store_at(tmp_path)
    value = np.tile(np.arange(1000, dtype=np.int64), 2000)  # 16 MB, mapped when raw
    pickled = pickle_group({"v": value})
    store.write(pickled)
    on_disk = blob_path(store, pickled.digest).stat().st_size
    assert on_disk < pickled.size / 10
    back = store.read(pickled.digest)["v"]
    assert np.array_equal(back, value)
    back[0] = -1  # a restored array is the user's to mutate, as before compression
    assert back[0] == -1


def test_random_bytes_are_stored_raw_not_inflated(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    value = os.urandom(2 << 20)
    pickled = pickle_group({"v": value})
    store.write(pickled)
    assert blob_path(store, pickled.digest).stat().st_size < pickled.size + 200
    assert store.read(pickled.digest) == {"v": value}


@pytest.mark.parametrize("where", [0.3, 0.6])
def test_a_flipped_byte_inside_a_compressed_segment_is_refused_by_its_check(
    tmp_path: Path, where: float
) -> None:
    store = store_at(tmp_path)
    pickled = pickle_group({"v": table_like()})
    store.write(pickled)
    path = blob_path(store, pickled.digest)
    raw = bytearray(path.read_bytes())
    assert len(raw) < pickled.size  # the segment really is compressed
    raw[int(len(raw) * where)] ^= 1
    path.write_bytes(bytes(raw))
    assert store.load(pickled.digest) == "stored value failed its check; not restored"


def test_the_same_value_stored_by_two_frames_is_one_blob(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    value = table_like()
    first, second = pickle_group({"v": value}), pickle_group({"v": value.copy()})
    store.write(first)
    store_at(tmp_path).write(second)  # another kernel, same content
    assert first.digest == second.digest
    assert [d for d, _, _ in store.blobs()] == [first.digest]


def test_a_blob_of_the_previous_uncompressed_format_still_restores(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    value = {"v": table_like(), "label": "prices"}
    pickled = pickle_group(value)
    path = blob_path(store, pickled.digest)
    path.parent.mkdir(parents=True)
    with open(path, "wb") as fh:  # LGV2: header, pickle, buffers, MAC (as 0.x versions wrote)
        fh.write(header(pickled.main, pickled.buffers))
        fh.write(pickled.main)
        for buffer in pickled.buffers:
            fh.write(buffer)
        fh.write(store.mac(pickled, pickled.digest))
    assert path.read_bytes()[:4] == b"LGV2"
    back = store.read(pickled.digest)
    assert np.array_equal(back["v"], value["v"]) and back["label"] == "prices"


def test_a_speculative_write_stores_the_compressed_form_too(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    value = table_like()
    speculative = store.speculate(pickle_group({"v": value}, digest=False))
    assert speculative is not None
    digest = pickle_group({"v": value}).digest
    assert speculative.keep(digest)
    assert blob_path(store, digest).stat().st_size < value.nbytes
    assert np.array_equal(store.read(digest)["v"], value)


def test_without_zstandard_blobs_are_raw_and_a_compressed_one_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_at(tmp_path)
    compressed = pickle_group({"v": table_like()})
    store.write(compressed)
    monkeypatch.setattr(variable_codec, "zstandard", None)
    plain = pickle_group({"w": np.zeros(100_000)})
    store.write(plain)
    assert blob_path(store, plain.digest).stat().st_size > plain.size
    assert np.array_equal(store.read(plain.digest)["w"], np.zeros(100_000))
    with pytest.raises(BlobRefused, match=r"zstandard package is not installed \(pip install"):
        store.read(compressed.digest)
