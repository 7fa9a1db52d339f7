"""The write rate attribution allows a big file the kernel is still writing is measured per
frame from `/proc/self/io` deltas (a fake reader here), not assumed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.frames import late_write, write_rate
from logician_kernel.frames.write_rate import DEFAULT_RATE, MIN_SAMPLE, WriteRate, proc_write_bytes

MB = 1024 * 1024


class Fake:
    """A `/proc/self/io` counter and a clock the test moves."""

    def __init__(self) -> None:
        self.written: int | None = 0
        self.now = 100.0

    def cell(self, rate: WriteRate, wrote: int, took: float) -> None:
        rate.begin()
        if self.written is not None:
            self.written += wrote
        self.now += took
        rate.end()


def sparse_file(path: Path, size: int) -> float:
    """A file of `size` bytes that costs no disk; its mtime."""
    with open(path, "wb") as fh:
        fh.truncate(size)
    return os.lstat(path).st_mtime


def make() -> tuple[Fake, WriteRate]:
    fake = Fake()
    return fake, WriteRate(read=lambda: fake.written, clock=lambda: fake.now)


def test_the_default_holds_until_a_cell_writes_enough_to_measure() -> None:
    fake, rate = make()
    assert rate.bytes_per_second == DEFAULT_RATE
    fake.cell(rate, MB, 10.0)  # a log line and a long computation: no sample
    assert rate.bytes_per_second == DEFAULT_RATE and rate.samples == 0
    fake.cell(rate, 200 * MB, 2.0)  # 100 MB/s measured
    assert rate.samples == 1 and rate.bytes_per_second == pytest.approx(100 * MB)


def test_the_figure_moves_with_each_measured_cell_and_stays_in_bounds() -> None:
    fake, rate = make()
    fake.cell(rate, 100 * MB, 1.0)
    fake.cell(rate, 10 * MB, 1.0)  # a slower disk now (the cache is full)
    assert 10 * MB < rate.bytes_per_second < 100 * MB
    for _ in range(30):
        fake.cell(rate, 10 * MB, 1.0)
    assert rate.bytes_per_second == pytest.approx(10 * MB, rel=0.01)
    fake.cell(rate, MIN_SAMPLE, 3600.0)
    assert rate.bytes_per_second >= write_rate.FLOOR


def test_no_proc_io_keeps_the_default() -> None:
    fake, rate = make()
    fake.written = None
    fake.cell(rate, 500 * MB, 1.0)
    assert rate.bytes_per_second == DEFAULT_RATE and rate.samples == 0


def test_the_real_counter_reads_where_the_kernel_has_it() -> None:
    if not os.path.exists("/proc/self/io"):
        pytest.skip("no /proc/self/io on this system")
    assert isinstance(proc_write_bytes(), int)


def test_attribution_allows_the_measured_rate_for_a_big_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100 MB file whose mtime is 3 s after the kernel's last recorded write to it: on a disk
    measured at 10 MB/s that is the kernel still writing; measured at 1 GB/s, someone else."""
    big = tmp_path / "big.bin"
    mtime = sparse_file(big, 100 * MB)
    monkeypatch.setattr(late_write, "slowdown", lambda: 1.0)
    fake, slow = make()
    fake.cell(slow, 100 * MB, 10.0)
    monkeypatch.setattr(late_write, "RATE", slow)
    assert late_write.written_later(big, mtime - 3.0) == ""
    fake, fast = make()
    fake.cell(fast, 1000 * MB, 1.0)
    monkeypatch.setattr(late_write, "RATE", fast)
    assert "after this kernel's last write" in late_write.written_later(big, mtime - 3.0)


def test_a_cell_slower_than_the_figure_is_allowed_its_own_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cells measured at 1 GB/s, then one that wrote 300 MB in 6 s (the disk shared with the
    previous frame's large-file copy): its 300 MB file, mtime 4 s after the kernel opened it,
    is still the kernel's own write, not someone else's."""
    big = tmp_path / "model-copy.bin"
    mtime = sparse_file(big, 300 * MB)
    monkeypatch.setattr(late_write, "slowdown", lambda: 1.0)
    fake, rate = make()
    for _ in range(3):
        fake.cell(rate, 1000 * MB, 1.0)
    fake.cell(rate, 300 * MB, 6.0)
    assert rate.bytes_per_second > 500 * MB  # the moving figure barely moved
    assert rate.for_last_cell == pytest.approx(50 * MB)
    monkeypatch.setattr(late_write, "RATE", rate)
    assert late_write.written_later(big, mtime - 4.0) == ""
    fake.cell(rate, MB, 1.0)  # the next cell wrote little: the figure alone again
    assert rate.for_last_cell == rate.bytes_per_second
