#!/usr/bin/env bash
# Create .venv and install Logician Kernel with its test tools, from this checkout only.
# Idempotent: re-running it refreshes the install.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "setup: git is required (apt-get install git)" >&2; exit 2; }
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
echo "setup: installed into .venv ($(.venv/bin/python --version)); kernels:"
.venv/bin/jupyter kernelspec list
