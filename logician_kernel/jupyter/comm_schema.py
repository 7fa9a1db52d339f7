"""`comm_schema.json`, generated from the comm's message unions (`comm_messages.py`).

    python -m logician_kernel.jupyter.comm_schema --write   # regenerate the committed file
    python -m logician_kernel.jupyter.comm_schema --check   # exit 1 when it is stale

The document keeps the shape the lab extension's `protocol.test.ts` reads: each side's
`oneOf` lists its messages inline (one branch per `type`), shared parts are `$defs` in
lowerCamel case (`frameRow`, `status`, `approvalPrompt`), the version is `$defs.v`.

Must never: be edited by hand (the models are the declaration), or write anywhere but the
committed schema file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

from ..types.field_docs import FIELD_DOCS, FIELD_DOCS_ENV
from .comm_messages import (
    FRONTEND,
    KERNEL,
    SCHEMA_VERSION,
    TARGET,
    FramesPreview,
    FramesRewind,
)

SCHEMA_FILE = Path(__file__).resolve().parent / "comm_schema.json"
"""The generated JSON schema, committed (the lab extension's tests read it)."""


def schema() -> dict[str, Any]:
    """The JSON schema of both unions, as `comm_schema.json` holds it."""
    template = "#/$defs/{model}"
    frontend = FRONTEND.json_schema(mode="validation", ref_template=template)
    kernel = KERNEL.json_schema(mode="serialization", ref_template=template)
    defs: dict[str, Any] = {}
    for side in (frontend, kernel):
        for name, body in side.pop("$defs", {}).items():
            if name in defs and defs[name] != body:
                raise ValueError(f"two different models are both named {name}")
            defs[name] = body
    sides = {}
    for name, side in (("frontend", frontend), ("kernel", kernel)):
        branches = [defs.pop(ref["$ref"].rsplit("/", 1)[1]) for ref in side["oneOf"]]
        for branch in branches:
            branch["properties"]["v"] = {"$ref": "#/$defs/v"}  # one version, stated once
            if branch["properties"]["type"]["const"] in _TARGETED:
                branch["allOf"] = [{"$ref": "#/$defs/frameTarget"}]  # the model's validator
        sides[name] = {"oneOf": branches}
    defs = {
        "v": {"const": SCHEMA_VERSION},
        "frameTarget": {
            "oneOf": [
                {"required": ["frame"], "not": {"required": ["cell_id"]}},
                {"required": ["cell_id"], "not": {"required": ["frame"]}},
            ]
        },
        **{_def_name(k): _tidy(v) for k, v in defs.items()},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://logician-kernel.invalid/comm/v{SCHEMA_VERSION}",
        "title": f"The `{TARGET}` comm target, schema version {SCHEMA_VERSION}",
        "description": (
            "Generated from logician_kernel/jupyter/comm_messages.py (do not edit; run "
            "`python -m logician_kernel.jupyter.comm_schema --write`). Messages between a "
            "frontend (the lab extension) and logician_kernel/jupyter/comm.py. A request may "
            "carry `id`; its answer echoes it as `re`. Unknown or malformed requests are "
            "answered with `error`."
        ),
        "version": SCHEMA_VERSION,
        "target": TARGET,
        "$defs": defs,
        **{name: _tidy(side) for name, side in sides.items()},
    }


_TARGETED = {get_args(m.model_fields["type"].annotation)[0] for m in (FramesPreview, FramesRewind)}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def _def_name(name: str) -> str:
    return name[:1].lower() + name[1:]


def _tidy(node: Any, *, in_properties: bool = False) -> Any:
    """Drop what pydantic adds for people reading Python (titles) and OpenAPI's
    `discriminator`; point references at the renamed definitions."""
    if isinstance(node, list):
        return [_tidy(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if not in_properties and key in ("title", "discriminator"):
            continue
        if key == "$ref" and isinstance(value, str):
            value = "#/$defs/" + _def_name(value.rsplit("/", 1)[1])
        out[key] = _tidy(value, in_properties=key == "properties" and not in_properties)
    return out


def main(argv: list[str]) -> int:
    """`--write`: regenerate `comm_schema.json`; `--check`: exit 1 when it is stale;
    otherwise print the schema. The field descriptions come from docstrings, read only under
    `LOGICIAN_FIELD_DOCS=1` (`types/field_docs.py`): without it, this runs again in a fresh
    interpreter that has it."""
    if not FIELD_DOCS:
        env = {**os.environ, FIELD_DOCS_ENV: "1"}
        command = [sys.executable, "-m", "logician_kernel.jupyter.comm_schema", *argv]
        return subprocess.run(command, env=env, check=False).returncode
    text = schema_text()
    if "--write" in argv:
        SCHEMA_FILE.write_text(text)
    elif "--check" in argv:
        if SCHEMA_FILE.read_text() != text:
            print(
                f"{SCHEMA_FILE} is stale: run python -m logician_kernel.jupyter.comm_schema --write",
                file=sys.stderr,
            )
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
