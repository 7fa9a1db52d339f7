"""Renders `examples/config.toml` from the schema, so the example cannot drift from it.

Regenerate with: `python -m logician_kernel.config._example > examples/config.toml`.
A test compares the file with this rendering.
"""

from __future__ import annotations

import textwrap
from typing import Any, get_origin

from pydantic import BaseModel

from ._field_docs import describe_fields
from ._keys import format_key, to_toml_literal
from ._schema import LogicianSettings

__all__ = ["render_example"]

_INTRO = """\
Logician Kernel - example configuration: every key, with its default (prices are examples).

Where configuration comes from, lowest to highest precedence:
  1. built-in defaults (the values below)
  2. user file: <user config dir>/config.toml, e.g. ~/.config/logician/config.toml
     (`$LOGICIAN_CONFIG_DIR` overrides the directory)
  3. project file: <workspace>/.logician/config.toml - applied only once the workspace is
     trusted (`logician trust [DIR]` or `%logician trust`) as it is now; it may not set
     workspace.root or anything credential-like, and fields that can take the kernel over
     (model.base_url, model.api_key_env, model.extra_body, model.tool_choice, recordings,
     permissions.mode/headless/allow, looser budgets, hook commands) apply only after
     `logician trust --allow KEY`
  4. the selected profile: a [profiles.NAME] table (below) chosen by `profile = "NAME"`,
     LOGICIAN_PROFILE=NAME, or `%%logician --profile NAME` for one cell
  5. environment variables LOGICIAN_<SECTION>__<KEY>, e.g. LOGICIAN_MODEL__NAME=gpt-4.1
     (values are TOML literals: LOGICIAN_BUDGET__MAX_TURNS=5)
  6. session overrides: `%logician config set KEY VALUE` in a notebook

Inspect with `logician config show` / `%logician config`; change one key with
`logician config set KEY VALUE --persist user|project`, which keeps this file's comments.
Lists say their merge rule: `union` adds every layer's items, `replace` takes the highest.
API keys never go in this file: model.api_key_env names the variable that holds the key.
JSON Schema for editors: the #:schema line above (`logician config schema` prints it)."""

_EXAMPLE_PRICES: dict[str, dict[str, float]] = {
    "gpt-4.1": {"input_per_mtok": 2.0, "output_per_mtok": 8.0, "cached_input_per_mtok": 0.5},
    "claude-sonnet-4-5": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
}


_EXAMPLE_SERVERS: dict[str, dict[str, Any]] = {
    "files": {
        "command": "python",
        "args": ["-m", "my_mcp_server"],
        "env": {"DATA_DIR": "/data"},
        "cwd": ".",
        "allowed_tools": ["search", "fetch_*"],
        "excluded_tools": [],
        "enabled": False,
        "connect_timeout_seconds": 10.0,
        "call_timeout_seconds": 60.0,
    },
    "tracker": {
        "url": "http://127.0.0.1:8765/mcp",
        "headers": {"Authorization": "env:TRACKER_TOKEN"},
        "enabled": False,
    },
}

_EXAMPLE_TABLES: dict[tuple[str, str], tuple[str, dict[str, dict[str, Any]]]] = {
    ("budget", "prices"): (
        "# Example prices; check your provider's current price list.",
        _EXAMPLE_PRICES,
    ),
    ("mcp", "servers"): (
        "# Example servers (disabled; set enabled = true to connect them).",
        _EXAMPLE_SERVERS,
    ),
}
"""The mappings of the example config, with the note that introduces their entries."""


def _comment(text: str, width: int = 92) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        flat = " ".join(paragraph.split())
        lines += [
            "# " + line
            for line in textwrap.wrap(
                flat, width - 2, break_on_hyphens=False, break_long_words=False
            )
        ] or ["#"]
    return lines


def _literal(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    return to_toml_literal(value)


def _field_lines(model: type[BaseModel], name: str) -> list[str]:
    info = model.model_fields[name]
    lines = _comment(info.description or "")
    default = info.get_default(call_default_factory=True)
    if callable(info.json_schema_extra):  # provider-dependent: shown commented out
        filled = model.model_validate({})
        lines.append(f"# {name} = {_literal(getattr(filled, name))}")
    elif default is None or default == ():
        example = (info.examples or [None])[0]
        if example is not None:
            lines.append(f"# {name} = {_literal(example)}")
        if default == ():
            lines.append(f"{name} = []")
    elif default == {}:  # a free-form table (model.extra_body): its example, then empty
        example = (info.examples or [None])[0]
        if example is not None:
            lines.append(f"# {name} = {_literal(example)}")
        lines.append(f"{name} = {{}}")
    else:
        lines.append(f"{name} = {_literal(default)}")
    return lines


_EXAMPLE_PROFILE = ("cheap", {"model": {"name": "gpt-4.1-mini"}, "budget": {"max_cost_usd": 0.2}})


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def render_example() -> str:
    # The schema as a path relative to this file (examples/ beside logician_kernel/): editors
    # with taplo validate the example, and a copy of it once the line points elsewhere.
    describe_fields()
    out = ["#:schema ../logician_kernel/resources/config.schema.json"]
    out += [line.rstrip() for line in _comment_block(_INTRO)]
    fields = LogicianSettings.model_fields
    # Top-level keys come before the first table, as TOML requires.
    for name, info in fields.items():
        if not _is_section(info.annotation) and get_origin(info.annotation) is not dict:
            out += ["", *_field_lines(LogicianSettings, name)]
    for section, section_info in fields.items():
        model = section_info.annotation
        if get_origin(model) is dict:  # `profiles`: one example table
            name, table = _EXAMPLE_PROFILE
            out += ["", *_comment(section_info.description or ""), f"[{section}.{name}]"]
            out += [f"{key} = {_literal(value)}" for key, value in table.items()]
            continue
        if not _is_section(model):
            continue
        assert isinstance(model, type) and issubclass(model, BaseModel)
        out += ["", *_comment(model.__doc__ or ""), f"[{section}]"]
        tables: list[str] = []
        for name, info in model.model_fields.items():
            if get_origin(info.annotation) is dict and (section, name) in _EXAMPLE_TABLES:
                note, entries = _EXAMPLE_TABLES[(section, name)]
                tables += ["", *_comment(info.description or "")]
                tables.append(note)
                for number, (entry_name, values) in enumerate(entries.items()):
                    tables += [""] if number else []
                    tables.append(f"[{format_key((section, name, entry_name))}]")
                    tables += [f"{k} = {_literal(v)}" for k, v in values.items()]
                continue
            out += ["", *_field_lines(model, name)]
        out += tables
    return "\n".join(out) + "\n"


def _comment_block(text: str) -> list[str]:
    return [("# " + line) if line else "#" for line in text.splitlines()]


if __name__ == "__main__":
    print(render_example(), end="")
