"""The incremental SSE parser, including a property test over arbitrary split points."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logician_kernel.providers import SSEEvent, SSEParser


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def test_fields_comments_and_multiline_data() -> None:
    body = b": keep-alive\nevent: delta\nid: 7\ndata: one\ndata:two\ndata\n\ndata: [DONE]\n\n"
    assert parse(body) == [
        SSEEvent(data="one\ntwo\n", event="delta", id="7"),
        SSEEvent(data="[DONE]", id="7"),
    ]


def test_event_without_data_is_not_dispatched_and_resets_its_name() -> None:
    assert parse(b"event: lonely\n\ndata: x\n\n") == [SSEEvent(data="x")]


def test_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SSEEvent(data="a"),
        SSEEvent(data="b"),
    ]


def test_utf8_character_split_across_chunks_and_leading_bom() -> None:
    body = "\ufeffdata: héllo ✓\n\n".encode()
    assert parse(*(body[i : i + 1] for i in range(len(body)))) == [SSEEvent(data="héllo ✓")]


def test_end_of_stream_keeps_complete_lines_and_drops_a_torn_one() -> None:
    assert parse(b"data: whole\n") == [SSEEvent(data="whole")]
    assert parse(b"data: whole\n\ndata: tor") == [SSEEvent(data="whole")]


_line_text = st.text(st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)))
_event = st.tuples(
    st.one_of(st.none(), _line_text.filter(bool)),
    st.lists(_line_text, min_size=1, max_size=4),
    st.one_of(st.none(), _line_text),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_event, max_size=6),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
    data=st.data(),
)
def test_any_split_of_any_stream_parses_the_same(events, line_end, data) -> None:
    text, expected, last_id = "", [], None
    for name, lines, event_id, comment in events:
        if comment:
            text += ": note" + line_end
        if name is not None:
            text += f"event: {name}{line_end}"
        if event_id is not None:
            text += f"id: {event_id}{line_end}"
            last_id = event_id
        text += "".join(f"data: {line}{line_end}" for line in lines) + line_end
        expected.append(SSEEvent(data="\n".join(lines), event=name or "message", id=last_id))
    body = text.encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert parse(*pieces) == expected
