"""Keep secrets out of what the ledger stores about a cell (its first line, for listings).

Known secret values (the API key the configuration names) are replaced wherever they appear;
common credential shapes (`sk-...` keys, `api_key = "..."` assignments, bearer tokens, URLs
with a password) are masked too. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "****"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # provider keys: OpenAI/Anthropic style, GitHub and Slack tokens, AWS access key ids
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{12,}"), MASK),
    (re.compile(r"\b(?:ghp|gho|ghs|ghu|github_pat|xox[abpr])_?[A-Za-z0-9_\-]{16,}"), MASK),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK),
    # name = "value" where the name says it is a credential
    (
        re.compile(
            r"(?i)((?:api[_-]?key|token|secret|passw(?:or)?d|credential)[A-Za-z0-9_]*"
            r"""\s*[:=]\s*)(['"])[^'"]+\2"""
        ),
        rf"\1\2{MASK}\2",
    ),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"), rf"\1{MASK}"),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+(@)"), rf"\1{MASK}\2"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret value and credential-looking token masked."""
    for value in secrets:
        if value and len(value) >= 6:
            text = text.replace(value, MASK)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
