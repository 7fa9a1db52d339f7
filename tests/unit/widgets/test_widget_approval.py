"""ApprovalCard without a browser: widgets talk to ipywidgets' own dummy comm."""

from __future__ import annotations

import pytest
from ipywidgets import Widget

pytest.importorskip("ipywidgets")

from ipywidgets.widgets.tests.utils import setup_test_comm, teardown_test_comm  # noqa: E402

from logician_kernel.agent.approvals import ApprovalPrompt  # noqa: E402
from logician_kernel.jupyter.widgets import (  # noqa: E402
    CHOICES,
    ApprovalCard,
    colours,  # noqa: E402
)
from logician_kernel.jupyter.widgets.approval import MAX_PREVIEW_LINES, preview_html  # noqa: E402


@pytest.fixture(autouse=True)
def _dummy_comm():
    setup_test_comm()
    yield
    # Close what the test made while the dummy comm is still there, not at interpreter exit.
    Widget.close_all()
    teardown_test_comm()


def request(**changes: str) -> ApprovalPrompt:
    fields = {
        "request_id": "r1",
        "call_id": "call_1",
        "tool": "bash",
        "description": "List the files",
        "preview": "ls -la",
        "preview_kind": "command",
        "suggested_rule": "bash(ls:*)",
        "reason": "commands ask in `ask` mode",
    }
    return ApprovalPrompt.model_validate({**fields, **changes})


def make_card(**changes: str) -> tuple[ApprovalCard, list[tuple[str, str]]]:
    calls: list[tuple[str, str]] = []
    card = ApprovalCard(request(**changes), lambda choice, note: calls.append((choice, note)))
    return card, calls


def all_disabled(card: ApprovalCard) -> bool:
    return all(b.disabled for b in card.buttons.values()) and card.note.disabled


EXPECTED = {
    "allow_once": "Allowed once",
    "allow_session": "Allowed for this session",
    "always_allow": "Always allowed (bash(ls:*))",
    "deny": "Denied: use rg instead",
    "deny_and_stop": "Denied, and the run stopped: use rg instead",
}


@pytest.mark.parametrize("choice", CHOICES)
def test_click_decides_once_and_disables_everything(choice: str) -> None:
    card, calls = make_card()
    assert not card.decided and not any(b.disabled for b in card.buttons.values())
    card.note.value = "use rg instead"
    card.buttons[choice].click()
    assert calls == [(choice, "use rg instead")]
    assert card.decision == choice and card.decided_via == ""
    assert all_disabled(card)
    assert EXPECTED[choice] in card.outcome.value
    for other in CHOICES:  # a second click (even a forced one) is ignored
        card.buttons[other].click()
    assert card.resolve("deny", "late", via="sidebar") is False
    assert calls == [(choice, "use rg instead")]
    assert card.decision == choice


def test_header_and_always_allow_show_reason_and_rule() -> None:
    card, _ = make_card()
    assert "Approve bash?" in card.header.value
    assert "commands ask in `ask` mode" in card.header.value
    assert "bash(ls:*)" in card.buttons["always_allow"].tooltip
    assert "bash(ls:*)" in card.rule.value
    assert card.note.placeholder == "Note for the agent (sent with a denial)"


def test_no_rule_means_no_always_allow() -> None:
    card, _ = make_card(suggested_rule="")
    assert card.buttons["always_allow"].disabled
    assert card.rule.value == ""


def test_resolve_from_elsewhere_does_not_call_back() -> None:
    card, calls = make_card()
    assert card.resolve("deny", "not now", via="sidebar") is True
    assert calls == []
    assert all_disabled(card)
    assert card.decided_via == "sidebar"
    assert "Denied: not now (decided in the sidebar)" in card.outcome.value
    card.buttons["allow_once"].click()
    assert card.resolve("allow_once", via="stdin") is False
    assert calls == [] and card.decision == "deny"


def test_resolve_phrases_and_unknown_choice() -> None:
    card, _ = make_card()
    card.resolve("allow_session", via="headless")
    assert "Allowed for this session (decided by the headless policy)" in card.outcome.value
    with pytest.raises(ValueError):
        make_card()[0].resolve("maybe")


def test_everything_is_escaped() -> None:
    evil = "<script>alert(1)</script>"
    card, _ = make_card(tool=evil, description=evil, preview=evil, reason=evil, suggested_rule=evil)
    card.resolve("deny", evil)
    for widget in (card.header, card.preview, card.rule, card.outcome):
        assert "<script>" not in widget.value
        assert "&lt;script&gt;" in widget.value


def test_long_previews_are_bounded() -> None:
    text = "\n".join(f"line {i}" for i in range(MAX_PREVIEW_LINES + 25))
    out = preview_html(text, "code")
    assert f"line {MAX_PREVIEW_LINES - 1}" in out and f"line {MAX_PREVIEW_LINES}\n" not in out
    assert "… 25 more lines" in out
    wide = preview_html("x" * 100_000, "command")
    assert len(wide) < 2_000 and "…" in wide
    assert "more line" not in preview_html("a\nb", "code")


def test_diff_lines_are_coloured_and_escaped() -> None:
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-old <a>\n+new & <b>\n same"
    card, _ = make_card(tool="edit", preview=diff, preview_kind="diff")
    out = card.preview.value
    added = f"color: {colours.TEXT}; background: {colours.ADDED_BACKGROUND};"
    removed = f"color: {colours.TEXT}; background: {colours.REMOVED_BACKGROUND};"
    assert f'<span style="{added}">+new &amp; &lt;b&gt;</span>' in out
    assert f'<span style="{removed}">-old &lt;a&gt;</span>' in out
    # the theme's colours, never a light-mode hex alone (it glares in JupyterLab Dark)
    assert "--jp-success-color1" in added and "--jp-error-color1" in removed
    assert '<span style="font-weight: bold;">--- a/f.py</span>' in out
    assert "\n same" in out


def test_command_and_code_are_monospace() -> None:
    for kind in ("command", "code"):
        out = preview_html("print(1)", kind)  # type: ignore[arg-type]
        assert "<pre" in out and "monospace" in out


def test_text_plain_of_the_card_is_the_question_with_its_choices() -> None:
    """What `jupyter console`, nbconvert's text exports and logs show instead of the widget."""
    card, _ = make_card()
    text = card.plain_text()
    assert text.splitlines()[0] == "Approve bash? (commands ask in `ask` mode)"
    assert "$ ls -la" in text
    assert text.splitlines()[-1] == (
        "Choices: Allow once · Allow for this session · Always allow (bash(ls:*)) · Deny"
        " · Deny and stop"
    )
    card.resolve("deny", "use rg instead", via="sidebar")
    assert card.plain_text().splitlines()[-1] == ("Denied: use rg instead (decided in the sidebar)")


def test_text_plain_of_the_card_is_bounded_and_offers_no_rule_it_has_not() -> None:
    card, _ = make_card(preview="\n".join(f"line {i}" for i in range(500)), suggested_rule="")
    text = card.plain_text()
    assert "line 19" in text and "line 20" not in text and "… 480 more lines" in text
    assert "Always allow" not in text


def test_the_card_shows_the_gates_own_request_and_offers_no_rule_when_there_is_none() -> None:
    from logician_kernel.agent.approvals import ApprovalRequest

    gate_request = ApprovalRequest(
        call_id="call_9",
        tool="bash",
        description="curl -H 'Authorization: ***' example.com",
        arguments={"command": "curl -H 'Authorization: ***' example.com"},
        reason="commands ask in `ask` mode",
        suggested_rule=None,  # the rule would have held a secret
        mode="ask",
    )
    card = ApprovalCard(gate_request, lambda choice, note: None)
    assert card.buttons["always_allow"].disabled
    text = card.plain_text()
    assert "Approve bash?" in text and "Always allow" not in text
    assert card.resolve("deny", "not now", via="comm")
    assert "Denied: not now (decided in the sidebar)" in card.plain_text()
