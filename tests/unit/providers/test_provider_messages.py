"""The message vocabulary: closed unions, documented fields, exact JSON round trips."""

from __future__ import annotations

import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from logician_kernel import types
from logician_kernel.types import (
    MESSAGE_ADAPTER,
    PROVIDER_EVENT_ADAPTER,
    AssistantMessage,
    ImagePart,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

_text = st.text(max_size=20)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_user_parts = st.lists(
    st.builds(TextPart, text=_text)
    | st.builds(ImagePart, media_type=st.just("image/png"), data=_text),
    max_size=3,
)
_call = st.builds(
    ToolCall,
    id=_text,
    name=_text,
    arguments=st.dictionaries(_text, _json, max_size=3),
    invalid_arguments=st.none() | _text,
)
_messages = st.one_of(
    st.builds(SystemMessage, content=_text),
    st.builds(UserMessage, content=_user_parts),
    st.builds(
        AssistantMessage, content=st.lists(st.builds(TextPart, text=_text) | _call, max_size=3)
    ),
    st.builds(ToolResultMessage, tool_call_id=_text, content=_user_parts, is_error=st.booleans()),
)


@settings(max_examples=200, deadline=None)
@given(message=_messages)
def test_messages_round_trip_through_json_exactly(message) -> None:
    encoded = MESSAGE_ADAPTER.dump_json(message)
    decoded = MESSAGE_ADAPTER.validate_json(encoded)
    assert decoded == message
    assert MESSAGE_ADAPTER.dump_json(decoded) == encoded


def test_response_event_round_trips_and_exposes_text_and_calls() -> None:
    call = ToolCall(id="c1", name="read", arguments={"path": "a.py", "n": [1, 2.5, None]})
    response = ModelResponse(
        message=AssistantMessage(content=[TextPart(text="Let me look. "), call]),
        stop_reason="tool_use",
    )
    assert (
        PROVIDER_EVENT_ADAPTER.validate_json(PROVIDER_EVENT_ADAPTER.dump_json(response)) == response
    )
    assert response.message.text == "Let me look. "
    assert response.message.tool_calls == [call]


def test_unions_are_closed_and_models_strict() -> None:
    with pytest.raises(ValidationError):
        MESSAGE_ADAPTER.validate_python({"kind": "developer", "content": "x"})
    with pytest.raises(ValidationError):
        MESSAGE_ADAPTER.validate_python({"kind": "system", "content": "x", "extra": 1})


def _vocabulary_models() -> list[type[BaseModel]]:
    return [
        value
        for value in vars(types.messages).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == types.messages.__name__
    ]


@pytest.mark.parametrize("model", _vocabulary_models(), ids=lambda m: m.__name__)
def test_every_field_has_a_docstring(model: type[BaseModel]) -> None:
    undocumented = [name for name, info in model.model_fields.items() if not info.description]
    assert not undocumented, f"{model.__name__} fields without a docstring: {undocumented}"


def test_every_union_member_has_a_literal_kind() -> None:
    for union in (types.Message, types.ProviderEvent, types.UserPart, types.AssistantPart):
        members = typing.get_args(typing.get_args(union)[0])
        for member in members:
            assert typing.get_origin(member.model_fields["kind"].annotation) is typing.Literal
