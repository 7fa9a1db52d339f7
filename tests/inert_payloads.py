"""Hostile text a model, a tool, an MCP server or a file can put in front of the user, and a
check that HTML the kernel sent keeps all of it inert (issue 27, finding 0).

Every script payload sets `window.__pwned` (and the title) to its own name, so a browser test
can say which one ran; every load goes to `http://127.0.0.1:{beacon}/…`, so a loopback
server can say whether anything was fetched. `CLICKS` are the texts a user would click.
"""

from __future__ import annotations

import re

JS = "window.__pwned='{name}';document.title='PWNED {name}'"


def payloads(beacon: int) -> list[str]:
    """One payload per line, none containing a newline (they also ride in bash comments)."""
    url = f"http://127.0.0.1:{beacon}"

    def js(name: str) -> str:
        return JS.format(name=name)

    return [
        f'<img src=x onerror="{js("img-onerror")}">',
        f"<script>{js('script')}</script>",
        f'<details open ontoggle="{js("details-ontoggle")}">toggled</details>',
        f'<video><source onerror="{js("video-source")}"></video>',
        "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
        f'<svg onload="{js("svg-onload")}"><circle r="5"/></svg>',
        f"<style>@import url({url}/css-import);</style>",
        f"<img src={url}/img-remote>",
        f"![beacon image]({url}/md-image)",
        f'<link rel="stylesheet" href="{url}/link-css">',
        f'<object data="{url}/object"></object><embed src="{url}/embed">',
        f'<meta http-equiv="refresh" content="0;url=javascript:{js("meta-refresh")}">',
        f"[jslink](javascript:{js('js-link')})",
        "[entitylink](jav&#x09;ascript:window.__pwned='entity-link')",
        "[datalink](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[vblink](vbscript:msgbox(1))",
        "<javascript:window.__pwned='autolink'>",
        f"$\\href{{javascript:{js('mathjax-href')}}}{{mathclick}}$",
        f"$$\\href{{javascript:{js('mathjax-display')}}}{{mathclick2}}$$",
        f"\\(\\href{{javascript:{js('mathjax-paren')}}}{{mathclick3}}\\)",
        f'$\\bbox[background:url({url}/bbox)]{{boxed}}$ $\\enclose{{box}}[style="background:url({url}/enclose)"]{{x}}$',
        f'<form action="javascript:{js("form-action")}"><button>formclick</button></form>',
        f'<details><summary onclick="{js("summary-onclick")}">summaryclick</summary>x</details>',
        f'<a href="javascript:{js("raw-link")}">rawclick</a>',
        f'<math><mtext><table><mglyph><style><img src=x onerror="{js("mxss")}">',
        f'<div style="background:url({url}/style-url)">styled</div>',
    ]


CLICKS = (
    "jslink",
    "entitylink",
    "mathclick",
    "mathclick2",
    "mathclick3",
    "formclick",
    "summaryclick",
    "rawclick",
)
"""Texts of the payloads that need a click to run."""

_TAG = re.compile(r"<[^<>]*>")
_BAD_IN_TAGS = [
    (
        re.compile(
            r"^<\s*/?\s*(script|img|iframe|svg|style|video|source|object|embed|form|link|"
            r"meta|math|base|input|button|audio|frame|applet|textarea|select)\b",
            re.I,
        ),
        "a live element",
    ),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an event handler"),
    (re.compile(r"""\shref\s*=\s*(?!["']?(?:https?:|mailto:))""", re.I), "a non-http(s) link"),
    (re.compile(r"\s(src|srcdoc|action|formaction|data|background)\s*=", re.I), "a load"),
    (re.compile(r"url\s*\(|@import|expression\s*\(", re.I), "a CSS load"),
]
_TYPESET_LINK = re.compile(
    r"mathjax_process[^<>]*>[^<]*\\(href|url|class|style|cssId|require|data|unicode)", re.I
)


def live_parts(markup: str) -> list[str]:
    """What in `markup` could run or load something; empty when it is inert. Text between
    tags is escaped (no raw `<`), so only the tags and the typeset math spans can be live."""
    found = [
        f"{why}: {tag}"
        for tag in _TAG.findall(markup)
        for pattern, why in _BAD_IN_TAGS
        if pattern.search(tag)
    ]
    if _TYPESET_LINK.search(markup):
        found.append("a math span that MathJax would typeset with a link or style")
    return found
