"""Every broad `except` (bare, `Exception`, `BaseException`) in the package that does not raise
again says why it swallows, in a comment on the `except` line or the line after it: a reader
must not have to guess whether a failure is meant to vanish."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "logician_kernel"
BROAD = {"Exception", "BaseException"}


def is_broad(node: ast.expr | None) -> bool:
    if node is None:
        return True
    if isinstance(node, ast.Name):
        return node.id in BROAD
    if isinstance(node, ast.Attribute):
        return node.attr in BROAD
    if isinstance(node, ast.Tuple):
        return any(is_broad(element) for element in node.elts)
    return False


def raises_again(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(node, ast.Raise) for stmt in handler.body for node in ast.walk(stmt))


def comment_lines(source: str) -> set[int]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {tok.start[0] for tok in tokens if tok.type == tokenize.COMMENT}


def test_every_swallowing_broad_except_says_why() -> None:
    silent = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        comments = comment_lines(source)
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source, str(path))):
            if not isinstance(node, ast.ExceptHandler):
                continue
            if is_broad(node.type) and not raises_again(node):
                line = node.lineno
                if line not in comments and line + 1 not in comments:
                    where = f"logician_kernel/{path.relative_to(PACKAGE)}:{line}"
                    silent.append(f"{where}: `{lines[line - 1].strip()}` says no why")
    assert not silent, "broad excepts that swallow without a reason:\n" + "\n".join(silent)
