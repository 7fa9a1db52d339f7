"""The one way the kernel builds HTML: every `text/html` output and every `ipywidgets.HTML`
value is made of `Markup` from `tag`, `escape`, `join` and `inert`.

Why one helper: JupyterLab trusts the outputs of cells run in its session (and of notebooks it
signed), so it inserts their HTML without its sanitizer. Whatever a model, a tool, an MCP server,
a file name or a variable name puts into our HTML must therefore reach the page as text. Here
every value that is not already `Markup` is escaped; tag and attribute names come from short
allow-lists (no `on*` handler, no `href`/`src` but through `link`, which takes only
`http(s)`/`mailto`); a `style` that could load something (`url(`, `@import`, `expression`) is
refused. `inert` wraps a block so that MathJax leaves it alone: text such as
`$\\href{javascript:…}{x}$` in a path or a variable name is never typeset into a live link.

Must never: import Jupyter (pure string building), accept a tag or attribute outside its lists,
or pass a plain `str` through unescaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

__all__ = [
    "MATH_IGNORE",
    "MATH_PROCESS",
    "Markup",
    "UnsafeMarkupError",
    "escape",
    "inert",
    "is_safe_url",
    "join",
    "link",
    "tag",
]

MATH_IGNORE = "mathjax_ignore tex2jax_ignore"
"""Classes MathJax 3 (`ignoreHtmlClass`) and MathJax 2 (`tex2jax_ignore`) skip: our blocks."""

MATH_PROCESS = "mathjax_process tex2jax_process"
"""Classes that re-enable typesetting inside an ignored block: only vetted math spans."""

ALLOWED_TAGS = frozenset(
    {
        "b",
        "blockquote",
        "br",
        "code",
        "del",
        "details",
        "div",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "small",
        "span",
        "strong",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
"""Every element the kernel emits. No script, style, img, iframe, svg, form, video, object."""

VOID_TAGS = frozenset({"br", "hr"})

ALLOWED_ATTRS = frozenset({"class", "style", "title", "start", "open"})
"""Attribute names `tag` accepts (`href` only through `link`); never an `on*` handler."""

SAFE_SCHEMES = ("http://", "https://", "mailto:")
"""Link targets the kernel's HTML may carry: nothing that runs (javascript:, vbscript:), embeds
(data:) or reaches the local machine's files (file:)."""

_STYLE_LOADS = re.compile(r"url\s*\(|@import|expression\s*\(|image-set|\\", re.IGNORECASE)


class UnsafeMarkupError(ValueError):
    """A caller asked for a tag, an attribute or a style the helper does not emit."""

    def __init__(self, field: str, value: str) -> None:
        super().__init__(f"safe_html: {field} {value!r} is not allowed in kernel HTML")
        self.field = field
        """Which part was refused: `tag`, `attribute`, `style` or `href`."""
        self.value = value
        """What was asked for."""


class Markup(str):
    """HTML built by this module: inserted as is by `tag`/`join`, never escaped twice."""

    __slots__ = ()


def escape(value: object) -> Markup:
    """`value` as HTML text (quotes too, so it is safe in an attribute); `Markup` unchanged."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Markup:
    """Escape each part that is not `Markup` and concatenate them."""
    return Markup(escape(sep).join(escape(p) for p in parts))


def is_safe_url(url: str) -> bool:
    """Whether `url` may be a link target: it must start with `http://`, `https://` or
    `mailto:` exactly (an allow-list by prefix, so `jav&#x09;ascript:` and other spellings of
    a scheme cannot pass), and hold no control character or whitespace a browser strips."""
    if any(ord(c) < 0x21 or c == "\x7f" for c in url):
        return False
    return url.lower().startswith(SAFE_SCHEMES)


def _attrs(attrs: dict[str, object]) -> str:
    out = []
    for raw, value in attrs.items():
        name = raw.rstrip("_").replace("_", "-")  # class_ -> class
        if name not in ALLOWED_ATTRS:
            raise UnsafeMarkupError("attribute", name)
        if value is None or value is False:
            continue
        if value is True:
            out.append(f" {name}")
            continue
        text = str(value)
        if name == "style" and _STYLE_LOADS.search(text):
            raise UnsafeMarkupError("style", text)
        out.append(f' {name}="{escape(text)}"')
    return "".join(out)


def tag(name: str, *children: object, **attrs: object) -> Markup:
    """`<name attrs>children</name>`: children that are not `Markup` are escaped; attribute
    values are always escaped. `class_=` sets `class`; `True` writes a bare attribute."""
    if name not in ALLOWED_TAGS:
        raise UnsafeMarkupError("tag", name)
    opening = f"<{name}{_attrs(attrs)}>"
    if name in VOID_TAGS:
        return Markup(opening)
    return Markup(f"{opening}{join(children)}</{name}>")


def link(href: str, *children: object, **attrs: object) -> Markup:
    """An `<a>` to an `http(s)`/`mailto` target that opens apart from the notebook; any other
    target is refused (callers that render untrusted text check `is_safe_url` first)."""
    if not is_safe_url(href):
        raise UnsafeMarkupError("href", href)
    rel = ' rel="noopener noreferrer nofollow"'
    return Markup(f'<a href="{escape(href)}"{rel}{_attrs(attrs)}>{join(children)}</a>')


def inert(*children: object, block: str = "div", class_: str = "") -> Markup:
    """A block MathJax will not typeset (kernel text stays text), with optional classes."""
    classes = f"lk-inert {MATH_IGNORE}" + (f" {class_}" if class_ else "")
    return tag(block, *children, class_=classes)
