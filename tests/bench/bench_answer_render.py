"""What rendering the agent's answer in the kernel costs (issue 27: inert HTML, not
`text/markdown`): `answer_bundle` over answers of 2,000 to 100,000 characters that mix
paragraphs, code, inline math, links, a list and a table, as agents write them.

    .venv/bin/python tests/bench/bench_answer_render.py [--repeat R]

Prints the median and the worst of R renders per size; exit 0.
"""

from __future__ import annotations

import argparse
import statistics
import time

from logician_kernel.jupyter.display import answer_bundle

PARAGRAPH = (
    "The function `load(path)` reads **each** row; see [the docs](https://example.org/x) "
    "and $x_i^2 + y$ for the cost. A <b>tag</b> is shown as text.\n\n"
)
UNIT = (
    PARAGRAPH * 4
    + "```python\nfor i in range(10):\n    print(i)\n```\n\n- one\n- two\n\n"
    + "| a | b |\n|---|---|\n"
    + "| 1 | 2 |\n" * 20
    + "\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for size in (2_000, 20_000, 100_000):
        text = (UNIT * (size // len(UNIT) + 1))[:size]
        answer_bundle(text)  # warm the parser
        runs = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            answer_bundle(text)
            runs.append(time.perf_counter() - started)
        print(
            f"{size:>7,} characters: median {statistics.median(runs) * 1e3:7.1f} ms, "
            f"worst {max(runs) * 1e3:7.1f} ms"
        )


if __name__ == "__main__":
    main()
