#!/usr/bin/env bash
# One command: set everything up, then run the tour notebook headless on the Logician kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
.venv/bin/logician run notebooks/01-rewind-cells.ipynb -o build/01-rewind-cells.executed.ipynb
