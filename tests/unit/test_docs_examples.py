"""Every configuration example in the docs is valid configuration (it is what users copy)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logician_kernel.config import load_effective_config

DOCS = Path(__file__).parents[2] / "docs"
BLOCKS = [
    (doc.name, i, block)
    for doc in sorted(DOCS.glob("*.md"))
    for i, block in enumerate(re.findall(r"```toml\n(.*?)```", doc.read_text(), re.S))
]


@pytest.mark.parametrize(("doc", "index", "block"), BLOCKS, ids=[f"{d}#{i}" for d, i, _ in BLOCKS])
def test_toml_example_is_valid_configuration(
    tmp_path: Path, doc: str, index: int, block: str
) -> None:
    (tmp_path / "config.toml").write_text(block)
    cfg = load_effective_config(tmp_path, env={"LOGICIAN_CONFIG_DIR": str(tmp_path)})
    assert cfg.notices == (), f"{doc} example {index}: {cfg.notices}"
    assert "user" in cfg.applied_layers


def test_there_are_examples_to_check() -> None:
    assert len(BLOCKS) >= 8
