"""`%%logician` prompts: `{name}` interpolates a notebook variable, and nothing else changes
(issue 36: every `}}` became `}`, so pasted nested JSON lost a brace)."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError

from logician_kernel.jupyter.agent import interpolate


def test_pasted_nested_json_keeps_every_brace() -> None:
    pasted = 'Fix this config: {"model": {"options": {"num_ctx": 8192}}} and {{"a": {}}}'
    assert interpolate(pasted, {}) == pasted
    data = '{"a": {"b": {"c": [1, {"d": 2}]}}}'
    assert json.loads(interpolate(data, {})) == json.loads(data)


def test_variables_interpolate_and_double_braces_name_a_literal() -> None:
    ns = {"base": 21, "rows": [1, 2]}
    assert interpolate("double {base}, not {{base}}; {rows}", ns) == (
        "double 21, not {base}; [1, 2]"
    )
    assert interpolate('{"k": {base}}', ns) == '{"k": 21}'  # a variable inside JSON


def test_a_missing_variable_is_named() -> None:
    with pytest.raises(UsageError, match="no variable 'missing'"):
        interpolate("use {missing}", {})
