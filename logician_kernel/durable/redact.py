"""The one redactor: every durable record passes through `redact` before it is written.

The ledger (messages, tool calls and results, cell first lines), the audit log, model
recordings, error messages and `config show` all mask with these rules, so there is one
strictest notion of a secret rather than one per writer. Masked:

- exact values the caller names (the configured API key) and the values of credential-named
  environment variables the kernel can see (`OPENAI_API_KEY`, `DB_PASSWORD`, ...), and the
  password of a URL held in any environment variable (`DATABASE_URL`);
- known key formats (`sk-…`, `ghp_…`, `xox…`, `AKIA…`, `AIza…`, JWTs, PEM private keys);
- credential-named keys in `KEY=value`, `key: value`, `"key": "value"` forms, quoted or not
  (`*PASSWORD*`, `*SECRET*`, `*TOKEN*`, `*_KEY`, `credential`, ...);
- bearer tokens, the user and password of a URL, `?token=` style query parameters.

Secrets, not paths: a name is judged by a curated list (`is_credential_name`), so `PWD`,
`SSH_AUTH_SOCK`, `GPG_KEY` (a key id), `AUTH_DOMAIN`, `HF_HUB_DISABLE_TOKEN` or `KEY_PATH` are
not credentials; and an exact value is never masked into other text when it is shorter than
`MIN_SECRET_CHARS` or is a path (one that exists, or one the working directory lies in or
under): masking `/home/me` would turn every path of the workspace into `****/project/...`
in what the model, hooks and the audit log see.

Over-masking is otherwise the accepted cost: a masked harmless value costs a reader a moment,
a kept secret cannot be taken back. Pure functions; the only I/O is reading `os.environ`, the
working directory and whether a path-shaped value exists.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "****"

MIN_SECRET_CHARS = 8
"""Shorter exact values (`1`, `true`, `hunter2`) would mask every occurrence of common text."""

_STRONG_NAME = re.compile(
    r"(?i)passw(?:or)?d|passphrase|secret|api[_-]?key|private[_-]?key|access[_-]?key|credential"
)
# Words that make a credential only as a whole word: `pwd` (MYSQL_PWD), `pass` (SMTP_PASS),
# `token`; `auth` and `key` only as the last word (BASIC_AUTH, DEPLOY_KEY, not AUTH_DOMAIN,
# SSH_AUTH_SOCK or KEYBOARD).
_WORD_NAME = re.compile(
    r"(?i)(?:^|[_.-])(?:token|pwd|pass|passphrase)(?:[_.-]|$)|(?:^|[_.-])(?:auth|key)$"
)
_CAMEL_NAME = re.compile(r"[a-z](?:Token|Key|Secret|Password)$")

NOT_CREDENTIAL_NAMES = frozenset(
    {
        "PWD",
        "OLDPWD",
        "HOME",
        "SSH_AUTH_SOCK",
        "GPG_KEY",
        "GPG_AGENT_INFO",
        "AUTH_DOMAIN",
        "TOKENIZERS_PARALLELISM",
        "KEYTIMEOUT",
        "XAUTHORITY",
        "KRB5CCNAME",
    }
)
"""Names that look like credentials and never hold one: directories, sockets, key ids, flags."""

_FLAG_WORD = re.compile(
    r"(?i)(?:^|[_.-])(?:disable|enable|use|no|skip|require|allow|show|hide)[_.-]"
    r"(?:[a-z0-9]+[_.-])?(?:token|auth|key|password|secret)"
)
"""`HF_HUB_DISABLE_TOKEN`, `USE_AUTH_TOKEN`: a switch about a credential, not one."""
_NOT_SECRET_SUFFIX = re.compile(
    r"(?i)[_.-](?:path|file|dir|directory|sock|socket|id|ids|name|type|env|var|url|uri"
    r"|endpoint|host|port|domain|region|timeout|ttl|expiry|expires|length|size|count|limit"
    r"|mode|algorithm|fingerprint|format|user|username|parallelism|policy|version)$"
)
"""`KEY_PATH`, `GPG_KEY_ID`, `TOKEN_URL`, `PASSWORD_FILE`: about a credential, holding none."""
_PUBLIC = re.compile(r"(?i)public[_.-]?key|pub[_.-]key|publicKey")


def is_credential_name(name: str) -> bool:
    """Whether a key or variable name says its value is a credential, by a curated list:
    `*PASSWORD*`, `*SECRET*`, `*API_KEY*`, `*TOKEN*` as a word (not `tokens`), `*_PWD`,
    `*_PASS`, `*_AUTH`, `*_KEY`, `authToken`; never one of `NOT_CREDENTIAL_NAMES`, a switch
    (`*_DISABLE_TOKEN`), a public key, or a name about a credential (`*_PATH`, `*_ID`, ...)."""
    if not (_STRONG_NAME.search(name) or _WORD_NAME.search(name) or _CAMEL_NAME.search(name)):
        return False
    if name.upper() in NOT_CREDENTIAL_NAMES or _PUBLIC.search(name):
        return False
    return not (_FLAG_WORD.search(name) or _NOT_SECRET_SUFFIX.search(name))


def is_maskable_value(value: str) -> bool:
    """Whether an exact value may be masked wherever it appears in other text: long enough,
    and not a path (one that exists, or the working directory or a folder it lies in)."""
    return len(value) >= MIN_SECRET_CHARS and not is_path_value(value)


def is_path_value(value: str) -> bool:
    """A path-shaped value that names an existing path, the working directory, a folder it
    lies in, or a path under it."""
    shaped = value.startswith(("/", "~", "./", "../")) or value[1:3] in (":\\", ":/")
    return shaped and "\n" not in value and _is_a_path(value)


def _is_a_path(value: str) -> bool:
    try:
        path = os.path.expanduser(value)
        if os.path.exists(path):
            return True
        here = os.path.abspath(os.getcwd())
        there = os.path.abspath(path)
    except (OSError, ValueError):  # an unreadable cwd or a NUL in the value: not a usable path
        return False
    return (
        here == there
        or here.startswith(there.rstrip(os.sep) + os.sep)
        or there.startswith(here + os.sep)
    )


_URL_PASSWORD = re.compile(r"://[^/@\s:]*:([^/@\s]+)@")

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


def environment_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of credential-named environment variables and the passwords of URLs in any
    variable (`DATABASE_URL=postgres://me:pw@host/db`), where they may be masked in text."""
    source = os.environ if env is None else env
    found: list[str] = []
    for name, value in source.items():
        if is_credential_name(name):
            found.append(value)
        found.extend(_URL_PASSWORD.findall(value) if "://" in value else ())
    return tuple(value for value in found if is_maskable_value(value))


def mask_values(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with only the exact secret values masked (`secrets` and the credential-named
    environment variables): what the model may see of a tool result, which must keep code
    such as `password = os.environ[...]` intact to stay editable. A value too short, or a
    path, is never masked (`is_maskable_value`)."""
    if not isinstance(text, str) or not text:
        return text
    values = {v for v in (*secrets, *environment_secrets()) if v and is_maskable_value(v)}
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def _mask_assigned(match: re.Match[str]) -> str:
    if not is_credential_name(match.group("name")):
        return match.group(0)
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') and len(value) > 1 else ""
    if value.strip(quote) in ("", MASK) or is_path_value(value.strip(quote)):
        return match.group(0)  # a path named by a credential variable is not the credential
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
