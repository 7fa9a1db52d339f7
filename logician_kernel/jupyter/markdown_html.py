"""The agent's Markdown answer rendered to inert HTML in the kernel, for `answer_bundle`.

Why in the kernel, not as `text/markdown`: JupyterLab renders a trusted output's Markdown with
its raw HTML live (the outputs of cells run in the session, and of notebooks it signed, are
trusted), so `<img src=x onerror=…>` in an answer ran script in the page and, through the
kernel's websocket, code in the kernel. Rendering here with `markdown-it-py` (CommonMark, raw
HTML off) gives the same HTML in every frontend (JupyterLab, Notebook 7, VS Code, nbconvert,
a saved notebook reopened) without trusting the frontend's sanitizer or our lab extension.

What reaches the page:
- raw HTML in the text is shown as text (`html=False`);
- links only to `http(s)`/`mailto` (`safe_html.is_safe_url`); anything else stays text;
- images are never loaded: `![alt](http://…)` becomes a link named "image: alt", so model
  text cannot make the page fetch a URL (a tracking pixel, a request to a local service);
- math (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`) is typeset by the frontend's MathJax only inside
  spans we vetted: the whole answer carries MathJax's ignore class, and a span that uses a
  command that links, styles or loads (`\\href`, `\\class`, `\\require`, …) is shown as text;
- a last check lists every tag and attribute of the result; anything outside the allow-list
  (a renderer bug, a plugin change) drops the answer to escaped `<pre>` text.

Must never: emit a tag or attribute outside `safe_html`'s lists, or decide anything else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath import texmath_plugin

from .safe_html import MATH_PROCESS, Markup, escape, inert, is_safe_url, link, tag

__all__ = ["render_markdown"]

_UNSAFE_TEX = re.compile(
    r"\\(?:href|url|class|cssid|style|require|data|unicode|mmltoken|html|texttip|mathtip|"
    r"toggle|fragment|action|tooltip|attr|bbox|enclose|img|includegraphics)(?![a-z])",
    re.IGNORECASE,
)
"""TeX commands that make a link, set a class/style/id/attribute (`\\bbox[style]`, `\\enclose`
attributes), load an extension, a font or an image, or act on a click. JupyterLab's MathJax filters these through its `safe` extension; the kernel does not
rely on every frontend doing so."""

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s[^<>]*)?)/?>")
_ATTR = re.compile(r'\s([A-Za-z_:][-A-Za-z0-9_:.]*)(?:="([^"]*)")?')
_ALLOWED_OUT_TAGS = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "code",
        "del",
        "div",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "span",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_ALLOWED_OUT_ATTRS = frozenset({"href", "rel", "title", "class", "start", "style"})
_CELL_STYLE = re.compile(r"text-align:(left|right|center)")
_CLASSES = re.compile(
    rf"language-[A-Za-z0-9+#.-]+|lk-math {MATH_PROCESS}|lk-math-refused|lk-image-link"
)
"""Classes the answer's elements may carry; only our vetted math spans re-enable MathJax."""


def _math(tex: str, *, display: bool, block: str) -> str:
    if _UNSAFE_TEX.search(tex):
        # shown as its source, never typeset (the answer's block is MathJax-ignored)
        return tag("code", tex, class_="lk-math-refused", title="not typeset: links or styles")
    source = f"\\[{tex}\\]" if display else f"\\({tex}\\)"
    return tag(block, source, class_=f"lk-math {MATH_PROCESS}")


def _render_rule(display: bool, block: str) -> Any:
    def rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return _math(tokens[idx].content, display=display, block=block)

    return rule


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    title = tokens[idx].attrGet("title")
    # the parser already refused every other target (validateLink); kept as a second check
    if not is_safe_url(href):
        return "<span>"
    tokens[idx].meta["lk_open"] = True
    extra = f' title="{escape(title)}"' if title else ""
    return f'<a href="{escape(href)}" rel="noopener noreferrer nofollow"{extra}>'


def _link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # CommonMark links do not nest: the nearest link_open before us is ours
    for token in reversed(tokens[:idx]):
        if token.type == "link_open":
            return "</a>" if token.meta.get("lk_open") else "</span>"
    return "</span>"


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    label = f"image: {alt}" if alt else "image"
    if not is_safe_url(src):
        return escape(f"[{label}]")
    # never an <img>: the page would fetch `src` as soon as it shows the answer
    return link(src, f"[{label}]", class_="lk-image-link")


_LANGUAGE = re.compile(r"[A-Za-z0-9+#.-]{1,40}")


def _fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # the info string is model text: only a plain language name becomes a class
    token = tokens[idx]
    words = token.info.split()
    language = words[0] if words and _LANGUAGE.fullmatch(words[0]) else ""
    classes = {"class_": f"language-{language}"} if language else {}
    return tag("pre", tag("code", token.content, **classes)) + "\n"


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = is_safe_url  # type: ignore[method-assign]  # markdown-it's hook
    dollarmath_plugin(
        md, allow_digits=False, allow_space=False, double_inline=True, allow_labels=False
    )
    texmath_plugin(md, delimiters="brackets")
    rules = md.add_render_rule
    rules("math_inline", _render_rule(False, "span"))
    rules("math_inline_double", _render_rule(True, "span"))
    for name in ("math_block", "math_block_eqno", "math_block_label"):
        rules(name, _render_rule(True, "div"))
    rules("link_open", _link_open)
    rules("link_close", _link_close)
    rules("image", _image)
    rules("fence", _fence)
    return md


_MD = _build()


def _only_allowed(out: str) -> bool:
    """Every tag and attribute in `out` is one the answer may carry."""
    for match in _TAG.finditer(out):
        if match.group(2).lower() not in _ALLOWED_OUT_TAGS:
            return False
        for attr in _ATTR.finditer(match.group(3)):
            name, value = attr.group(1).lower(), attr.group(2) or ""
            if name not in _ALLOWED_OUT_ATTRS:
                return False
            if name == "href" and not is_safe_url(value.replace("&amp;", "&")):
                return False
            if name == "style" and not _CELL_STYLE.fullmatch(value):
                return False
            if name == "class" and not _CLASSES.fullmatch(value):
                return False
    # a '<' that did not parse as a tag above would be a tag the scan could not read
    return out.count("<") == sum(1 for _ in _TAG.finditer(out))


def render_markdown(text: str) -> Markup:
    """The answer as inert HTML inside a MathJax-ignored `div.lk-answer`."""
    out = _MD.render(text)
    if not _only_allowed(out):
        return inert(tag("pre", text, style="white-space: pre-wrap;"), class_="lk-answer")
    return inert(Markup(out), class_="lk-answer")
