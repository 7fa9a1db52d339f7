"""Model output is inert (issue 27, finding 0): nothing a model, a tool, a file name or a
variable name puts into text reaches the page as live HTML.

Fast checks of the renderer and the escaping helper over the payload list, a static check that
no kernel module builds HTML by hand, and a real kernel answering through a scripted model on
loopback with the payloads in its answer, its reasoning, a tool call, a file name and variable
names: every `text/html` it sends is inert and no `text/markdown` carries model text. The same
payloads in a real JupyterLab: tests/browser/test_lab_inert_output.py.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path
from queue import Empty

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inert_payloads import live_parts, payloads
from kernel_harness import Kernel
from loopback import LoopbackServer, profile_reply

import logician_kernel.jupyter as jupyter_pkg
from logician_kernel.jupyter.display import answer_bundle, thinking
from logician_kernel.jupyter.markdown_html import render_markdown
from logician_kernel.jupyter.safe_html import (
    UnsafeMarkupError,
    escape,
    is_safe_url,
    link,
    tag,
)
from logician_kernel.jupyter.variables_view import vars_table
from logician_kernel.jupyter.widgets.approval import preview_html
from logician_kernel.ledger.frame_view import FrameView
from logician_kernel.ledger.thread_ledger import VariableRecord

PAYLOADS = payloads(9)
ALL = "\n\n".join(PAYLOADS)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_each_payload_renders_inert_in_the_answer(payload: str) -> None:
    html = render_markdown(f"Here is what the file said:\n\n{payload}\n\nand inline: {payload}")
    assert live_parts(html) == [], html


def test_all_payloads_together_render_inert_and_keep_their_text() -> None:
    bundle = answer_bundle(ALL)
    assert "text/markdown" not in bundle
    assert bundle["text/plain"] == ALL  # readable as it was written
    html = bundle["text/html"]
    assert live_parts(html) == [], html
    assert "<img" not in html and "<script" not in html.lower()
    # the user still sees what the model wrote, as text
    assert "&lt;img src=x onerror=" in html
    assert "mathclick" in html and "formclick" in html


@pytest.mark.parametrize(
    "text",
    [
        "[x](JaVaScRiPt:alert(1))",
        "[x]( javascript:alert(1))",
        "[x](java\tscript:alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](&#x6A;avascript&#58;alert(1))",
        "[x](javascript&colon;alert(1))",
        "[x](<javascript:alert(1)>)",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "[x](file:///etc/passwd)",
        "[x](//evil.example/x)",
        "<JAVASCRIPT:alert(1)>",
        "<data:text/html,x>",
        "![x](javascript:alert(1))",
        "![x][r]\n\n[r]: http://127.0.0.1:9/ref-image",
        '[x](http://ok.example/" onclick="alert(1))',
        '```"><img src=x onerror=alert(1)>\ncode\n```',
        "| a |\n|---|\n| <img src=x onerror=alert(1)> |",
        "$\\style{background:url(http://127.0.0.1:9/x)}{x}$",
        "$\\class{mathjax_process}{x}$ $\\require{html}$ $\\unicode{x}$ $\\cssId{a}{b}$",
        "$$\\url{javascript:alert(1)}$$",
        "$\\HREF{javascript:alert(1)}{x}$",
        "<!-- <img src=x onerror=alert(1)> -->",
        "&lt;img src=x onerror=alert(1)&gt;",
    ],
)
def test_obfuscated_links_schemes_and_tex_stay_text(text: str) -> None:
    html = render_markdown(text)
    assert live_parts(html) == [], html


def test_safe_links_and_math_still_work() -> None:
    html = render_markdown(
        "See [docs](https://example.org/a?b=1&c=2), <mailto:a@b.example>, "
        "and $x_1 * y^2$ or $$\\frac{a}{b}$$; `$not math$`."
    )
    assert '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">' in html
    assert 'href="mailto:a@b.example"' in html
    assert 'class="lk-math mathjax_process tex2jax_process">\\(x_1 * y^2\\)</span>' in html
    assert "\\[\\frac{a}{b}\\]" in html
    assert "<code>$not math$</code>" in html
    # the answer as a whole is skipped by MathJax; only the vetted spans are typeset
    assert html.startswith('<div class="lk-inert mathjax_ignore tex2jax_ignore lk-answer">')


def test_an_image_is_a_link_never_a_load() -> None:
    html = render_markdown("![chart](https://example.org/chart.png)")
    assert "<img" not in html
    assert '<a href="https://example.org/chart.png"' in html and "[image: chart]" in html


def test_the_reasoning_block_and_approval_preview_are_inert() -> None:
    assert live_parts(thinking(ALL).html) == []
    assert "&lt;script&gt;" in thinking(ALL).html
    for kind in ("command", "diff", "code", "text"):
        assert live_parts(preview_html(ALL, kind)) == []  # type: ignore[arg-type]


def test_vars_table_escapes_hostile_names_types_and_notes() -> None:
    view = FrameView(
        frame=3,
        execution_count=3,
        cell_id=None,
        code="",
        opened_at="",
        status="active",
        pre_tree=None,
    )  # type: ignore[call-arg]
    records = [VariableRecord(name=p, action="created", type=p, not_captured=p) for p in PAYLOADS]
    rendered = vars_table(view, records)
    assert live_parts(rendered.html) == [], rendered.html
    assert "<svg onload" in rendered.text  # the plain text keeps the names as they are


def test_the_helper_refuses_live_tags_attributes_links_and_styles() -> None:
    for name in ("script", "img", "iframe", "svg", "style", "form", "a"):
        with pytest.raises(UnsafeMarkupError, match="tag"):
            tag(name, "x")
    with pytest.raises(UnsafeMarkupError, match="attribute 'onclick'"):
        tag("div", "x", onclick="alert(1)")
    with pytest.raises(UnsafeMarkupError, match="attribute 'href'"):
        tag("div", "x", href="http://x")
    with pytest.raises(UnsafeMarkupError, match="style"):
        tag("div", "x", style="background: url(http://127.0.0.1:9/)")
    with pytest.raises(UnsafeMarkupError, match="href"):
        link("javascript:alert(1)", "x")
    assert (
        tag("b", "<i>", title='"><script>') == '<b title="&quot;&gt;&lt;script&gt;">&lt;i&gt;</b>'
    )
    assert escape(escape("<")) == "&lt;"  # Markup is never escaped twice
    for url in ("https://x", "HTTP://x", "mailto:a@b"):
        assert is_safe_url(url)
    for url in ("javascript:x", " http://x", "java\tscript:x", "data:x", "/x", "x", "file:///x"):
        assert not is_safe_url(url)


_HTML_TAG = re.compile(r"</?[a-z][a-z0-9]*(\s[^<>]*)?>", re.IGNORECASE)
_BUILDERS = {"safe_html.py", "markdown_html.py"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # a docstring, or a string under an attribute / a field (the house's field docs)
            ids.update(
                id(s.value)
                for s in body
                if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
            )
    return ids


def test_no_kernel_module_builds_html_by_hand() -> None:
    """Every `text/html` and `ipywidgets.HTML` value goes through `safe_html`: a string literal
    that holds a tag anywhere else under `logician_kernel/jupyter/` is a new hand-built path
    (this fails on the code before issue 27: `vars_table`, the approval card, the widgets)."""
    root = Path(jupyter_pkg.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name in _BUILDERS:
            continue
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if id(node) in docs:
                continue
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    v.value
                    for v in node.values
                    if isinstance(v, ast.Constant) and isinstance(v.value, str)
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            # A regex's named group `(?P<name>...)` is not markup.
            if _HTML_TAG.search(re.sub(r"\(\?P<\w+>", "(", text)):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {text[:60]!r}")
    assert found == []


# --- a real kernel, a scripted model, the payloads everywhere the kernel shows text ---------


def _bundles(messages: list[dict]) -> list[dict]:
    return [
        m["content"]["data"]
        for m in messages
        if m["msg_type"] in ("display_data", "update_display_data", "execute_result")
    ]


def _widget_html(messages: list[dict]) -> list[str]:
    """Values the kernel set on HTML widgets (comm messages), e.g. the approval card."""
    values = []
    for m in messages:
        if m["msg_type"] in ("comm_open", "comm_msg"):
            state = m["content"].get("data", {}).get("state", {})
            if state.get("_model_name") == "HTMLModel" or "value" in state:
                values.append(str(state.get("value", "")))
    return values


@pytest.mark.kernel
def test_a_kernel_shows_hostile_answer_reasoning_tool_and_names_as_text(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / "payloads.txt").write_text(ALL + "\n")
    comment = " ".join(p for p in PAYLOADS if "\n" not in p)
    server.script(
        profile_reply(
            "llamacpp",
            reasoning=ALL,
            calls=(("c1", "bash", {"command": f"cat payloads.txt  # {comment}"}),),
        ),
        profile_reply("llamacpp", reasoning=ALL, text=f"The file says:\n\n{ALL}\n"),
    )
    env = {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "LOGICIAN_MODEL__API_KEY_ENV": "",
        "LOGICIAN_PERMISSIONS__MODE": "full-auto",
    }
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician\nWhat does payloads.txt say?", timeout=120)
        assert r.status == "ok", r.text
        bundles = _bundles(r.messages)
        assert bundles, r.text
        assert not [b for b in bundles if "text/markdown" in b]
        answers = [b for b in bundles if "lk-answer" in b.get("text/html", "")]
        assert answers and "&lt;img src=x onerror=" in answers[-1]["text/html"]
        assert "<img src=x onerror=" in answers[-1]["text/plain"]  # the text as written
        assert any("lk-thinking" in b.get("text/html", "") for b in bundles)
        for b in bundles:
            assert live_parts(b.get("text/html", "")) == [], b["text/html"]

        # a variable whose name and type are hostile, and a file named like a payload
        r = k.run(
            "import threading\n"
            "Bad = type('<img src=x onerror=alert(1)>', (), {})\n"
            "hostile = Bad(); hostile.lock = threading.Lock()\n"
            "globals()['<svg onload=alert(2)>'] = threading.Lock()\n"
            "open('<img src=x onerror=alert(3)>.txt', 'w').write('x')\n"
        )
        assert r.status == "ok", r.text
        for command in (
            "%logician vars --last",
            "%logician frames",
            "%logician diff --last",
            "%logician status",
            "%logician rewind 2 --dry-run",
        ):
            shown = k.run(command)
            assert shown.status == "ok", shown.text
            html = "".join(b.get("text/html", "") for b in _bundles(shown.messages))
            assert html, command
            assert live_parts(html) == [], (command, html)
            if command.startswith("%logician vars"):
                assert "&lt;svg onload=alert(2)&gt;" in html  # named, as text
                assert "&lt;img src=x onerror=alert(1)&gt;" in html
    finally:
        k.shutdown()


@pytest.mark.kernel
def test_the_approval_card_shows_a_hostile_command_as_text(
    workspace: Path, model_env: dict[str, str], server: LoopbackServer
) -> None:
    """In `ask` mode the card's HTML widgets carry the call's command: every value is inert."""
    comment = " ".join(PAYLOADS)
    server.script(
        profile_reply("openai", calls=(("c1", "bash", {"command": f"true  # {comment}"}),)),
        profile_reply("openai", text="Denied; stopping."),
    )
    k = Kernel(
        workspace,
        {**model_env, "LOGICIAN_PERMISSIONS__MODE": "ask", "LOGICIAN_UI__STATUS_WIDGET": "false"},
    )
    try:
        # a widget-rendering frontend (JupyterLab's widget manager) opens this when it connects
        control = {"comm_id": "wm", "target_name": "jupyter.widget.control", "data": {}}
        k.kc.shell_channel.send(
            k.kc.session.msg("comm_open", control, metadata={"version": "1.0.0"})
        )
        msg_id = k.send("%%logician\nrun it")
        messages: list[dict] = []
        deny = None
        deadline = time.monotonic() + 60
        while deny is None and time.monotonic() < deadline:
            try:
                m = k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            messages.append(m)
            state = (
                m["content"].get("data", {}).get("state", {})
                if m["msg_type"] == "comm_open"
                else {}
            )
            if state.get("_model_name") == "ButtonModel" and state.get("description") == "Deny":
                deny = m["content"]["comm_id"]
        assert deny is not None, [m["msg_type"] for m in messages]
        values = _widget_html(messages)
        assert any("lk-approval-preview" in v for v in values), values
        assert any("&lt;script&gt;" in v for v in values), values
        for value in values:
            assert live_parts(value) == [], value
        click = {"comm_id": deny, "data": {"method": "custom", "content": {"event": "click"}}}
        k.kc.shell_channel.send(k.kc.session.msg("comm_msg", click))
        r = k.collect(msg_id, timeout=60)
        assert r.status == "ok", r.text
        for value in _widget_html(r.messages):  # the decision line
            assert live_parts(value) == [], value
    finally:
        k.shutdown()


# --- fuzzing: random Markdown built from the pieces attacks are made of ---------------------

_PIECES = [
    "<",
    ">",
    "</",
    "/>",
    '"',
    "'",
    "`",
    "```",
    "~~~",
    "$",
    "$$",
    "\\(",
    "\\)",
    "\\[",
    "\\]",
    "[",
    "]",
    "(",
    ")",
    "![",
    "](",
    "<http://x.y>",
    "javascript:",
    "jav&#x09;",
    "&#106;",
    "&colon;",
    "data:",
    "http://127.0.0.1:9/",
    "mailto:",
    " onerror=",
    " onclick=",
    "img",
    "svg",
    "script",
    "style",
    "iframe",
    "srcdoc=",
    "href=",
    "src=",
    "\\href{",
    "\\class{",
    "\\style{",
    "{",
    "}",
    "|",
    "---",
    "\n",
    "\n\n",
    "    ",
    "*",
    "_",
    "#",
    "> ",
    "- ",
    "1. ",
    "&",
    "&amp;",
    "\t",
    "\\",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=40))
def test_fuzzed_markdown_never_renders_live(pieces: list[str]) -> None:
    html = render_markdown("".join(pieces))
    assert live_parts(html) == [], html
