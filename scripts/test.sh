#!/usr/bin/env bash
# The test command: lint and format (ruff; the Jupyter-free core is enforced by its banned-api rule), type
# checking (mypy over logician_kernel/, zero errors), the lab
# extension's TypeScript unit tests (vitest), the keystroke and streaming flatness gates, the
# peer suites (ipykernel's and nbclient's own tests on both kernels), then
# the whole pytest suite - unit, real-kernel,
# notebooks (nbval), and the extension in a real JupyterLab in headless Chromium.
# Installs the test tools itself (scripts/setup.sh) when .venv lacks any of them, e.g. on a
# fresh clone or after scripts/tour.sh, which installs only what the tour needs.
# Extra arguments go to pytest, and then only the lint, format, type checks and pytest run.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=""
for tool in ruff mypy pytest playwright jupyter-lab nbdiff; do  # nbdiff: nbdime (the diff view)
  [ -x ".venv/bin/$tool" ] || missing="$missing $tool"
done
[ -x .venv/bin/python ] && .venv/bin/python -c "import xdist" 2>/dev/null || missing="$missing pytest-xdist"
if [ -n "$missing" ]; then
  echo "test: installing the test tools first (missing:$missing): bash scripts/setup.sh"
  bash scripts/setup.sh
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy logician_kernel
if [ "$#" -eq 0 ]; then
  (cd labextension && export PATH="$PWD/../.venv/bin:$PATH" &&
    { [ -d node_modules ] || jlpm install; } && jlpm test)
  # The committed prebuilt extension (what `pip install` ships without Node.js) must have been
  # built from labextension/ as it is now: its build carries the sources' digest.
  .venv/bin/python labextension/source_digest.py --check
  # The seed's flatness gates: keystrokes and streaming must cost no more than 2x with 10,000
  # history entries as with 10 (a ratio measured in one run; docs/benchmarks.md).
  .venv/bin/python tests/bench/bench_keystroke.py --quick
  .venv/bin/python tests/bench/bench_streaming.py --quick
  # The ecosystem's own tests on python3 and on logician, side by side (docs/drop-in.md):
  # ipykernel's kernel-starting tests and nbclient's; a test passing on python3 must pass here.
  .venv/bin/python scripts/peer_suites.py
fi
# pytest on LOGICIAN_TEST_WORKERS worker processes (pytest-xdist; default 2), each taking whole
# test files (--dist loadfile: a file's module-scoped kernels, Lab servers and scripted model
# replies serve its tests in order). Most of a test's time is spent waiting on a kernel or a
# browser, so two workers take about 40% off the suite's time even on 2 cores.
# LOGICIAN_TEST_WORKERS=0 runs it in this one process (for --pdb).
workers=${LOGICIAN_TEST_WORKERS:-2}
if [ "$workers" = 0 ]; then
  .venv/bin/python -m pytest "$@"
else
  .venv/bin/python -m pytest -n "$workers" --dist loadfile "$@"
fi
