"""The one redactor: every durable record passes through `redact` before it is written.

The ledger (messages, tool calls and results, cell first lines), the audit log, model
recordings, error messages and `config show` all mask with these rules, so there is one
strictest notion of a secret rather than one per writer. Masked:

- exact values the caller names (the configured API key) and the values of credential-named
  environment variables the kernel can see (`OPENAI_API_KEY`, `DB_PASSWORD`, ...);
- known key formats (`sk-…`, `ghp_…`, `xox…`, `AKIA…`, `AIza…`, JWTs, PEM private keys);
- credential-named keys in `KEY=value`, `key: value`, `"key": "value"` forms, quoted or not
  (`*PASSWORD*`, `*SECRET*`, `*TOKEN*`, `*_KEY`, `credential`, ...);
- bearer tokens, the user and password of a URL, `?token=` style query parameters.

Over-masking is the accepted cost: a masked harmless value costs a reader a moment, a kept
secret cannot be taken back. Pure functions, no I/O beyond reading `os.environ`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "****"

_MIN_SECRET_CHARS = 6
"""Shorter exact values (`1`, `true`) would mask every occurrence of common text."""

_STRONG_NAME = re.compile(r"(?i)passw(?:or)?d|secret|api[_-]?key|private[_-]?key|credential")
_WORD_NAME = re.compile(r"(?i)(?:^|[_.-])(?:token|pwd|passphrase|auth)(?:[_.-]|$)|[_.-]key$")
_CAMEL_NAME = re.compile(r"[a-z](?:Token|Key|Secret|Password)$")

_FORMATS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:sk|pk|rk|sess)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\b(?:ghp|gho|ghs|ghu|ghr|github_pat|glpat|xox[abprs])[_-][A-Za-z0-9_\-]{8,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S
    ),
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/\-]{8,}=*")
_URL_USERINFO = re.compile(r"(://)[^/@\s]+(@)")
_QUERY = re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access_token|secret|password)=)[^&#\s]+")
_ASSIGNED = re.compile(
    # The name starts at a boundary and is bounded, so a long run of word characters costs
    # linear time, not quadratic.
    r"""(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?P<close>["']?)"""
    r"""(?P<sep>[ \t]*[:=][ \t]*)"""
    r"""(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s'",;&}\])]+)"""
)


def is_credential_name(name: str) -> bool:
    """Whether a key or variable name says its value is a credential: `*PASSWORD*`,
    `*SECRET*`, `*API_KEY*`, `*TOKEN*` as a word (not `tokens`), `*_KEY`, `authToken`."""
    return bool(_STRONG_NAME.search(name) or _WORD_NAME.search(name) or _CAMEL_NAME.search(name))


def environment_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of credential-named environment variables (long enough to be secret)."""
    source = os.environ if env is None else env
    return tuple(
        value
        for name, value in source.items()
        if is_credential_name(name) and len(value) >= _MIN_SECRET_CHARS
    )


def mask_values(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with only the exact secret values masked (`secrets` and the credential-named
    environment variables): what the model may see of a tool result, which must keep code
    such as `password = os.environ[...]` intact to stay editable."""
    if not isinstance(text, str) or not text:
        return text
    values = {v for v in (*secrets, *environment_secrets()) if v and len(v) >= _MIN_SECRET_CHARS}
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def _mask_assigned(match: re.Match[str]) -> str:
    if not is_credential_name(match.group("name")):
        return match.group(0)
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') and len(value) > 1 else ""
    if value.strip(quote) in ("", MASK):
        return match.group(0)
    return f"{match.group('name')}{match.group('close')}{match.group('sep')}{quote}{MASK}{quote}"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret value and credential-looking token masked."""
    if not isinstance(text, str) or not text:
        return text
    text = mask_values(text, secrets)
    for pattern in _FORMATS:
        text = pattern.sub(MASK, text)
    text = _BEARER.sub(rf"\1\2{MASK}", text)
    text = _URL_USERINFO.sub(rf"\1{MASK}\2", text)
    text = _QUERY.sub(rf"\1{MASK}", text)
    return _ASSIGNED.sub(_mask_assigned, text)


def redact_data(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of JSON-like `value` with every string redacted and credential-named mapping
    keys' values replaced by `****` (recursively)."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {
            k: (MASK if isinstance(k, str) and _secret_leaf(k, v) else redact_data(v, secrets))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(v, secrets) for v in value)
    return value


def _secret_leaf(key: str, value: Any) -> bool:
    return is_credential_name(key) and isinstance(value, (str, int, float)) and value != ""
