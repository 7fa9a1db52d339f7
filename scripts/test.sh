#!/usr/bin/env bash
# The test command: lint (the Jupyter-free core is enforced by ruff's banned-api rule), then
# the whole suite - unit, real-kernel, notebooks (nbval). Needs `scripts/setup.sh` first.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
