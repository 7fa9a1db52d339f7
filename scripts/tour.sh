#!/usr/bin/env bash
# One command from a fresh clone: install what the tour needs, then run the tour notebook
# headless on the Logician kernel. "What the tour needs" is the package and its runtime
# dependencies: no test tools, no JupyterLab, no Chromium or Playwright, and no Node.js build
# of the lab extension (scripts/setup.sh installs all of those for the tests and for Lab).
# Re-running it reuses .venv; a .venv made by setup.sh is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "tour: git is required (apt-get install git)" >&2; exit 2; }
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [ ! -x .venv/bin/logician ] || ! .venv/bin/python -m pip show --quiet logician-kernel >/dev/null 2>&1; then
  echo "tour: installing logician-kernel and its runtime dependencies into .venv"
  # The wheel's build hook would build the lab extension with Node.js and a JupyterLab fetched
  # into an isolated build environment; the tour runs no Lab, so the hook is skipped and the
  # small build backends (hatchling, its editables helper) go into .venv instead.
  .venv/bin/python -m pip install --quiet "hatchling>=1.20" "hatch-jupyter-builder>=0.9" editables
  SKIP_JUPYTER_BUILDER=1 .venv/bin/python -m pip install --quiet --no-build-isolation -e .
fi
mkdir -p build
.venv/bin/logician run notebooks/01-rewind-cells.ipynb -o build/01-rewind-cells.executed.ipynb
