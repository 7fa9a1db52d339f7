"""scripts/peer_suites.py: the exceptions it honours are the ones docs/drop-in.md lists, and its
kernel-name change applies to the pinned ipykernel's tests/utils.py."""

from __future__ import annotations

import importlib.util
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
