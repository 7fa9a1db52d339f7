"""Separating reasoning from answer text in a content stream: `<think>…</think>` spans.

Reasoning models served without a reasoning parser (llama.cpp without `--reasoning-format`,
vLLM without `--reasoning-parser`, some Ollama builds) put their thinking inline in
`content`. The tags may be split across chunks, so the splitter holds back any tail that
could be the start of a tag until the next fragment decides it. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"

Piece = tuple[Literal["text", "reasoning"], str]


def _partial_tag_tail(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class ThinkSplitter:
    """Feed content fragments; get back answer text and reasoning pieces, in order.

    Only a `<think>` that opens the content (after whitespace) or follows a `</think>` starts
    reasoning: an answer that mentions the tag later is left alone."""

    def __init__(self) -> None:
        self._inside = False
        self._held = ""
        self._answering = False
        """Answer text has begun: no further `<think>` is looked for."""
        self._after_close = False
        """A span just closed: the blank lines that separate it from the answer are dropped."""

    def feed(self, fragment: str) -> list[Piece]:
        text = self._held + fragment
        self._held = ""
        pieces: list[Piece] = []
        while text:
            if self._inside:
                text = self._scan(text, CLOSE_TAG, "reasoning", pieces)
                continue
            if self._after_close:
                text = text.lstrip("\n")
                if not text:
                    break
                self._after_close = False
            if self._answering:
                pieces.append(("text", text))
                break
            lead = len(text) - len(text.lstrip())
            rest = text[lead:]
            if rest.startswith(OPEN_TAG):
                if lead:
                    pieces.append(("text", text[:lead]))
                text = rest[len(OPEN_TAG) :]
                self._inside = True
            elif not rest or OPEN_TAG.startswith(rest):
                self._held = text  # whitespace, or what may become `<think>`: wait and see
                break
            else:
                self._answering = True
        return pieces

    def _scan(self, text: str, tag: str, kind: Literal["reasoning"], pieces: list[Piece]) -> str:
        at = text.find(tag)
        if at >= 0:
            if at:
                pieces.append((kind, text[:at]))
            self._inside = False
            self._after_close = True
            return text[at + len(tag) :]
        held = _partial_tag_tail(text, tag)
        if held:
            self._held = text[-held:]
            text = text[:-held]
        if text:
            pieces.append((kind, text))
        return ""

    def close(self) -> list[Piece]:
        """The end of the content: a held-back partial tag was text after all."""
        held, self._held = self._held, ""
        return [("reasoning" if self._inside else "text", held)] if held else []
