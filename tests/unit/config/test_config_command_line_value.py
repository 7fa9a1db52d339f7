"""`config set KEY <rest of the line>`: every way a user types a list or a table works
(issue 36: `permissions.deny ["bash", "python", "edit"]` could not be typed at all)."""

from __future__ import annotations

import pytest

from logician_kernel.config._keys import coerce_raw, command_line_value, parse_literal

DENY = ("permissions", "deny")


@pytest.mark.parametrize(
    "typed",
    [
        '["bash", "python", "edit"]',  # TOML = JSON, with spaces
        '["bash","python","edit"]',
        '\'["bash", "python", "edit"]\'',  # shell-quoted, as the old parser required
        '"[\\"bash\\", \\"python\\", \\"edit\\"]"'.replace('\\"', "'"),  # TOML literal strings
        "['bash', 'python', 'edit']",
        '  ["bash", "python", "edit"]  ',
    ],
)
def test_a_list_typed_any_usual_way_is_a_list(typed: str) -> None:
    assert coerce_raw(DENY, command_line_value(typed)) == ["bash", "python", "edit"]


def test_a_json_object_becomes_a_table() -> None:
    literal = command_line_value('{"top_k": 20, "options": {"num_ctx": 32768}, "x": [1, 2]}')
    assert parse_literal(literal) == {"top_k": 20, "options": {"num_ctx": 32768}, "x": [1, 2]}
    assert parse_literal(command_line_value("{top_k = 20}")) == {"top_k": 20}


def test_scalars_and_strings_keep_their_meaning() -> None:
    assert command_line_value("5") == "5"
    assert coerce_raw(("model", "name"), command_line_value('"5"')) == "5"
    assert command_line_value("gpt 4.1 mini") == "gpt 4.1 mini"  # a bare string, spaces kept
    assert command_line_value("'not [a list'") == "'not [a list'"


@pytest.mark.parametrize("hostile", ["[1, ", "{", '{"a": null}', "[" * 5000, '{"a": 1'])
def test_broken_or_hostile_values_are_passed_on_for_validation_to_name(hostile: str) -> None:
    # Never an exception here: the value goes on as text and the schema names the key.
    assert isinstance(command_line_value(hostile), str)


def test_extra_body_takes_json_values_only_and_never_the_conversation() -> None:
    from pydantic import ValidationError

    from logician_kernel.config import LogicianSettings

    ok = LogicianSettings.model_validate({"model": {"extra_body": {"options": {"num_ctx": 1}}}})
    assert ok.model.extra_body == {"options": {"num_ctx": 1}}
    for bad, named in (
        ({"when": parse_literal("1979-05-27")}, "JSON values only"),
        ({"top_k": float("nan")}, "JSON values only"),
        ({"messages": []}, "messages"),
        ({"stream": False}, "stream"),
    ):
        with pytest.raises(ValidationError, match=named):
            LogicianSettings.model_validate({"model": {"extra_body": bad}})
    with pytest.raises(ValidationError, match="a tool's name"):
        LogicianSettings.model_validate({"model": {"tool_choice": "read; rm -rf /"}})
