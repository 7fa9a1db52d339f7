"""Server streams kept as fixtures (tests/fixtures/streams/<server>-<version>/) decode to the
text, tool calls and usage read from them by scripts/record_server_stream.py's plain rules:
straight through the decoder, and through a loopback server in pieces as a network splits
them. A directory whose `meta.json` says `"recorded": false` was written from a description,
not recorded; the rest are byte-for-byte recordings of a real server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loopback import Reply, split_every

from logician_kernel.providers._openai import ChatStreamDecoder
from logician_kernel.providers._sse import SSEParser
from logician_kernel.types import ModelResponse, ReasoningDelta

from .support import run_stream

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
CASES = sorted(STREAMS.glob("*/*.sse"))


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _decode(raw: bytes, piece: int) -> tuple[ModelResponse, str]:
    decoder, parser = ChatStreamDecoder("local"), SSEParser()
    events = []
    for chunk in split_every(raw, piece):
        for sse in parser.feed(chunk):
            events += decoder.feed(sse)
    for sse in parser.close():
        events += decoder.feed(sse)
    if not decoder.done:
        events += decoder.finish()
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    (response,) = [e for e in events if isinstance(e, ModelResponse)]
    return response, reasoning


def _check(response: ModelResponse, expected: dict) -> None:
    message = response.message
    assert message.text == expected["text"].strip() or message.text == expected["text"]
    calls = message.tool_calls
    assert [c.name for c in calls] == [c["name"] for c in expected["tool_calls"]]
    for call, want in zip(calls, expected["tool_calls"], strict=True):
        if want["id"]:
            assert call.id == want["id"]
        try:
            arguments = json.loads(want["arguments"])
        except ValueError:
            assert call.invalid_arguments == want["arguments"]  # kept raw, refused later
        else:
            assert call.arguments == arguments and call.invalid_arguments is None
    assert response.provider_stop_reason == expected["finish_reason"]
    assert response.stop_reason == (
        "tool_use"
        if calls
        else {"stop": "end_turn", "length": "max_tokens"}.get(expected["finish_reason"], "other")
    )
    usage = expected["usage"]
    if usage is not None:
        assert not response.usage_estimated
        assert (response.usage.input_tokens, response.usage.output_tokens) == (
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )


def test_there_are_stream_fixtures_and_each_says_whether_it_was_recorded() -> None:
    assert CASES, f"no stream fixtures under {STREAMS}"
    for folder in {path.parent for path in CASES}:
        meta = json.loads((folder / "meta.json").read_text())
        assert isinstance(meta["recorded"], bool) and meta["server"]
        assert sorted(meta["cases"]) == sorted(p.stem for p in folder.glob("*.sse"))


@pytest.mark.parametrize("path", CASES, ids=_id)
@pytest.mark.parametrize("piece", [1, 29, 1 << 20])
def test_a_fixture_decodes_to_what_it_says(path: Path, piece: int) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    response, reasoning = _decode(path.read_bytes(), piece)
    _check(response, expected)
    assert reasoning == expected["reasoning"]


@pytest.mark.parametrize("path", CASES, ids=_id)
def test_a_fixture_served_over_loopback_gives_the_same_reply(server, path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    server.script(Reply(pieces=split_every(path.read_bytes(), 61)))
    outcome = run_stream("openai", server)
    assert outcome.error is None, outcome.error
    response = outcome.events[-1]
    assert isinstance(response, ModelResponse)
    _check(response, expected)
