#!/usr/bin/env bash
# The test command: lint (the Jupyter-free core is enforced by ruff's banned-api rule), type
# checking (mypy over logician_kernel/, zero errors), the lab
# extension's TypeScript unit tests (vitest), then the whole pytest suite - unit, real-kernel,
# notebooks (nbval), and the extension in a real JupyterLab in headless Chromium.
# Needs `scripts/setup.sh` first. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/mypy logician_kernel
if [ "$#" -eq 0 ]; then
  (cd labextension && PATH="$PWD/../.venv/bin:$PATH" jlpm test)
fi
.venv/bin/python -m pytest "$@"
