"""Recording a real (loopback) session, replaying it offline, and building providers."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from loopback import Reply, openai_chunks, sse
from pydantic import ValidationError

from logician_kernel.providers import (
    AnthropicProvider,
    OpenAIProvider,
    ProviderSettings,
    RecordingProvider,
    ReplayError,
    ReplayMismatchError,
    ReplayProvider,
    RetryPolicy,
    complete,
    create_provider,
)
from logician_kernel.types import ModelRequest, TextPart, UserMessage

from .support import KEY, REQUEST

SECOND = ModelRequest(messages=[UserMessage(content=[TextPart(text="And then?")])])


def drain(provider, request):
    async def scenario():
        return [event async for event in provider.stream(request)]

    return asyncio.run(scenario())


def record(server, path) -> list[list]:
    server.script(
        Reply.error(429, {"error": {"message": "later"}}, retry_after="0"),
        Reply(pieces=[sse(*openai_chunks(text=["first"]), done=True)]),
        Reply(
            pieces=[
                sse(
                    *openai_chunks(tool=("c1", "read", ['{"pa', 'th": "a"}']), finish="tool_calls"),
                    done=True,
                )
            ]
        ),
    )

    async def scenario():
        async with httpx.AsyncClient(trust_env=False) as client:
            settings = {
                "provider": "openai",
                "name": "loop-model",
                "base_url": server.url,
                "record_file": str(path),
            }
            provider = create_provider(
                settings,
                env={"OPENAI_API_KEY": KEY},
                client=client,
                sleep=lambda _: asyncio.sleep(0),
            )
            assert isinstance(provider, RecordingProvider)
            sessions = []
            for request in (REQUEST, SECOND):
                sessions.append([event async for event in provider.stream(request)])
            return sessions

    return asyncio.run(scenario())


def test_record_then_replay_yields_the_same_events_offline(server, tmp_path) -> None:
    path = tmp_path / "session.jsonl"
    live = record(server, path)
    assert live[0][0].kind == "retry"
    text = path.read_text()
    assert KEY not in text and len(text.splitlines()) == 2

    replay = create_provider(
        {"provider": "replay", "name": "loop-model", "replay_file": str(path)}, env={}
    )
    replayed = [drain(replay, REQUEST), drain(replay, SECOND)]
    assert replayed == [live[0][1:], live[1]]  # the transport's retry is not part of the session
    assert replayed[1][-1].message.tool_calls[0].arguments == {"path": "a"}

    replay.reset()
    assert asyncio.run(complete(replay, REQUEST)).message.text == "first"


def test_mismatch_names_the_file_the_exchange_and_what_differs(server, tmp_path) -> None:
    path = tmp_path / "session.jsonl"
    record(server, path)
    replay = ReplayProvider(path)
    drain(replay, REQUEST)
    changed = ModelRequest(messages=[UserMessage(content=[TextPart(text="Something else")])])
    with pytest.raises(ReplayMismatchError) as raised:
        drain(replay, changed)
    error = raised.value
    assert (error.path, error.index) == (str(path), 1)
    assert str(path) in str(error) and "exchange 1" in str(error)
    assert "request.messages[0].content[0].text differs" in str(error)

    drain(replay, SECOND)
    with pytest.raises(ReplayMismatchError, match="has 2 exchanges; exchange 2 was requested"):
        drain(replay, SECOND)


def test_malformed_or_missing_recording_names_the_file(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index": 0}\n')
    with pytest.raises(ReplayError, match=r"bad\.jsonl line 1 is not a recorded exchange"):
        drain(ReplayProvider(bad), REQUEST)
    with pytest.raises(ReplayError, match=r"cannot read recording .*absent\.jsonl"):
        drain(ReplayProvider(tmp_path / "absent.jsonl"), REQUEST)


def test_settings_build_the_right_provider_with_defaults() -> None:
    openai = create_provider({"name": "gpt-4o"}, env={})
    assert isinstance(openai, OpenAIProvider)
    assert (openai.base_url, openai.api_key_env) == ("https://api.openai.com/v1", "OPENAI_API_KEY")
    settings = ProviderSettings(
        provider="anthropic",
        name="claude",
        api_key_env="MY_KEY",
        request_timeout_seconds=30,
        max_retries=5,
    )
    anthropic = create_provider(settings, env={"MY_KEY": KEY})
    assert isinstance(anthropic, AnthropicProvider)
    assert anthropic.base_url == "https://api.anthropic.com" and anthropic.api_key_env == "MY_KEY"
    assert anthropic.retry == RetryPolicy(max_retries=5) and anthropic.request_timeout == 30
    assert KEY not in repr(anthropic)
    local = create_provider(
        {"name": "qwen", "base_url": "http://localhost:11434/v1/", "api_key_env": ""}, env={}
    )
    assert local.base_url == "http://localhost:11434/v1" and local.api_key_env == ""


def test_replay_settings_need_a_recording() -> None:
    with pytest.raises(ValidationError, match="needs `replay_file`"):
        ProviderSettings(provider="replay", name="x")


def test_settings_schema_documents_every_field() -> None:
    schema = ProviderSettings.model_json_schema()
    assert all(field.get("description") for field in schema["properties"].values())
    assert json.dumps(schema)


def test_a_recording_masks_secrets_is_private_and_still_replays(server, tmp_path) -> None:
    path = tmp_path / "secret-session.jsonl"
    leaky = ModelRequest(
        messages=[UserMessage(content=[TextPart(text=f"env says DB_PASSWORD=hunter2-x and {KEY}")])]
    )
    server.script(Reply(pieces=[sse(*openai_chunks(text=["noted"]), done=True)]))

    async def scenario():
        async with httpx.AsyncClient(trust_env=False) as client:
            provider = create_provider(
                {
                    "provider": "openai",
                    "name": "m",
                    "base_url": server.url,
                    "record_file": str(path),
                },
                env={"OPENAI_API_KEY": KEY},
                client=client,
            )
            return [event async for event in provider.stream(leaky)]

    live = asyncio.run(scenario())
    text = path.read_text()
    assert "hunter2-x" not in text and KEY not in text and "DB_PASSWORD=****" in text
    assert path.stat().st_mode & 0o777 == 0o600
    replay = ReplayProvider(path)
    assert drain(replay, leaky) == live  # the fingerprint is of the request as sent


def test_the_configs_validated_model_settings_are_used_without_validating_again(
    monkeypatch, tmp_path
) -> None:
    from logician_kernel.config import ModelSettings

    def revalidated(*args, **kwargs):
        raise AssertionError("[model] was validated a second time")

    monkeypatch.setattr(ProviderSettings, "model_validate", revalidated)
    model = ModelSettings(
        name="qwen", base_url="http://localhost:11434/v1", api_key_env="", max_retries=4
    )
    local = create_provider(model, env={})
    assert isinstance(local, OpenAIProvider)
    assert (local.model, local.base_url, local.api_key_env) == (
        "qwen",
        "http://localhost:11434/v1",
        "",
    )
    assert local.retry == RetryPolicy(max_retries=4)
    # The schema lets `provider = "replay"` be set before its file; the factory names the field.
    with pytest.raises(ValueError, match=r"needs `model\.replay_file`"):
        create_provider(ModelSettings(provider="replay"), env={}, root=tmp_path)


def test_where_the_notebook_runs_is_not_part_of_a_recordings_fingerprint() -> None:
    """A recording made at the top of a workspace replays from a notebook in a subfolder: the
    system prompt's one location line is left out of the fingerprint, nothing else is."""
    from logician_kernel.loop import system_prompt
    from logician_kernel.providers._replay import request_fingerprint
    from logician_kernel.types import SystemMessage

    def request(system: str, text: str = "hi") -> ModelRequest:
        return ModelRequest(
            messages=[SystemMessage(content=system), UserMessage(content=[TextPart(text=text)])]
        )

    top = request(system_prompt("."))
    sub = request(system_prompt("notebooks"))
    assert "Current directory: `notebooks/`" in sub.messages[0].content  # type: ignore[union-attr]
    assert request_fingerprint(sub) == request_fingerprint(top)
    assert request_fingerprint(request(system_prompt("x"), "other")) != request_fingerprint(top)
    assert request_fingerprint(request(system_prompt(".") + " more")) != request_fingerprint(top)


def test_a_recording_replays_with_or_without_a_notebook_frontend() -> None:
    """The notebook tools are offered in JupyterLab and `logician run`, not under nbval: their
    specs are left out of the fingerprint, every other tool's are not."""
    from logician_kernel.providers._replay import request_fingerprint
    from logician_kernel.tools import default_tools

    specs = {name: tool.spec() for name, tool in default_tools().items()}
    message = UserMessage(content=[TextPart(text="hi")])
    without = ModelRequest(messages=[message], tools=[specs["read"]])
    with_them = ModelRequest(
        messages=[message], tools=[specs["read"], specs["notebook_read"], specs["notebook_edit"]]
    )
    assert request_fingerprint(with_them) == request_fingerprint(without)
    other = ModelRequest(messages=[message], tools=[specs["read"], specs["write"]])
    assert request_fingerprint(other) != request_fingerprint(without)


def test_what_the_notebook_tools_answered_is_not_part_of_the_fingerprint() -> None:
    """JupyterLab gives an inserted cell a new random id, `logician run` another: a recording
    of an agent that edits cells replays in both, as it does where the tools are not offered
    (nbval). What any other tool answered still counts."""
    from logician_kernel.providers._replay import request_fingerprint
    from logician_kernel.types import AssistantMessage, ToolCall, ToolResultMessage

    def after(name: str, answer: str, error: bool = False) -> ModelRequest:
        call = ToolCall(id="c1", name=name, arguments={"mode": "insert", "source": "x"})
        return ModelRequest(
            messages=[
                UserMessage(content=[TextPart(text="add a cell")]),
                AssistantMessage(content=[call]),
                ToolResultMessage(
                    tool_call_id="c1", content=[TextPart(text=answer)], is_error=error
                ),
            ]
        )

    lab = after("notebook_edit", "Inserted code cell id=3f2a9c at index 2.")
    headless = after("notebook_edit", "Inserted code cell id=7be01d at index 2.")
    unoffered = after("notebook_edit", "unknown tool notebook_edit", error=True)
    assert request_fingerprint(lab) == request_fingerprint(headless)
    assert request_fingerprint(lab) == request_fingerprint(unoffered)
    assert request_fingerprint(after("read", "a")) != request_fingerprint(after("read", "b"))
