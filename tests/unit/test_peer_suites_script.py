"""scripts/peer_suites.py: the exceptions it honours are the ones docs/drop-in.md lists, and its
kernel-name change applies to the pinned ipykernel's tests/utils.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("peer_suites", REPO / "scripts/peer_suites.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exceptions_are_read_from_their_section_only() -> None:
    text = (
        "## Peer-suite exceptions\n\n- `tests.test_kernel::test_a`: it needs a tty\n"
        "- not a test line\n\n## Later\n\n- `tests.test_kernel::test_b`: elsewhere\n"
    )
    assert _script().exceptions(text) == {"tests.test_kernel::test_a": "it needs a tty"}


def test_the_documented_list_is_empty_or_gives_reasons() -> None:
    allowed = _script().exceptions((REPO / "docs/drop-in.md").read_text())
    assert all(reason.strip() for reason in allowed.values())


def test_the_pins_are_the_installed_versions() -> None:
    script = _script()
    pins = script.pins()
    for name in ("ipykernel", "nbclient"):
        assert pins[name] == script.installed(name), name


def test_the_kernel_name_patch_applies_to_the_pinned_sdist() -> None:
    script = _script()
    sdist = script.CACHE / f"ipykernel-{script.pins()['ipykernel']}.tar.gz"
    if not sdist.is_file():
        pytest.skip("the sdist is fetched by scripts/peer_suites.py; not downloaded here")
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/tests/utils.py"))
        text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    for old, _new in script.PATCH["tests/utils.py"]:
        assert old in text


def test_a_junit_test_name_becomes_the_node_id_pytest_reruns(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_client.py").write_text("")
    node_id = _script().node_id
    assert (
        node_id("tests.test_client::test_run_all_notebooks[Factorials.ipynb-opts3]", tmp_path)
        == "tests/test_client.py::test_run_all_notebooks[Factorials.ipynb-opts3]"
    )
    assert (
        node_id("tests.test_client.TestExecute::test_kernel_death", tmp_path)
        == "tests/test_client.py::TestExecute::test_kernel_death"
    )


def test_a_failure_is_reported_with_the_end_of_its_message(tmp_path: Path) -> None:
    """The FAIL line of a CI log carries why the test failed, not only its name."""
    long = "\n".join(f"frame {i}" for i in range(40)) + "\nAssertionError: kernel still alive"
    (tmp_path / "nbclient-logician.xml").write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.test_client" name="test_a"/>'
        '<testcase classname="tests.test_client" name="test_b">'
        f'<failure message="assert not True">{long}</failure></testcase>'
        "</testsuite></testsuites>"
    )
    found = _script().results("nbclient", "logician", tmp_path)
    assert found["tests.test_client::test_a"] == ("passed", "")
    outcome, why = found["tests.test_client::test_b"]
    assert outcome == "failed"
    assert why.endswith("AssertionError: kernel still alive")
    assert "frame 0" not in why  # the end of a long traceback, not all of it


def test_the_counts_line_reads_outcomes_with_or_without_their_messages() -> None:
    counts = _script().counts
    bare = {"a": "passed", "b": "failed", "c": "skipped"}
    with_why = {"a": ("passed", ""), "b": ("failed", "AssertionError"), "c": ("skipped", "")}
    assert counts(bare) == counts(with_why) == "1 pass, 1 fail, 0 error, 1 skip"


def test_a_process_the_suites_left_running_is_killed(tmp_path: Path) -> None:
    """What ipykernel's debugger tests leave on a loaded machine (an orphaned debugpy
    adapter) is found by the suite's environment and killed; another process is not."""
    script = _script()
    scratch = tmp_path / "peer-suites-x"
    left = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env={**os.environ, "IPYTHONDIR": str(scratch / "ipython-ipykernel-python3")},
    )
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env={**os.environ, "IPYTHONDIR": str(tmp_path / "peer-suites-xy" / "ipython")},
    )
    try:
        assert script.strays(scratch) == [left.pid]
        killed = script.reap(scratch)
        assert len(killed) == 1 and "time.sleep(600)" in killed[0]
        assert left.wait(timeout=60) != 0
        assert other.poll() is None  # a sibling folder's name is not this run's
    finally:
        for proc in (left, other):
            proc.kill()
            proc.wait()
