#!/usr/bin/env bash
# Create .venv and install Logician Kernel with its test tools, from this checkout only.
# The install builds the lab extension from labextension/ (hatch-jupyter-builder runs jlpm,
# which comes with JupyterLab; Node.js must be on PATH). The browser tests need Debian's
# Chromium, the console test tmux: both installed here with apt-get when missing and we are root.
# Idempotent: re-running it refreshes the install.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "setup: git is required (apt-get install git)" >&2; exit 2; }
command -v node >/dev/null || { echo "setup: Node.js is required to build the lab extension (apt-get install nodejs)" >&2; exit 2; }
if [ ! -x /usr/bin/chromium ] && [ -z "${LOGICIAN_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: no /usr/bin/chromium; the browser tests need it (apt-get install chromium)" >&2
  fi
fi
if ! command -v tmux >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian's tmux for the jupyter console test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "setup: no tmux; the jupyter console test is skipped without it (apt-get install tmux)" >&2
  fi
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
# .venv-eg: Enterprise Gateway cannot share .venv (see the script); without it its test skips.
bash scripts/enterprise_gateway_env.sh ||
  echo "setup: Enterprise Gateway was not installed; tests/kernel/test_kernel_enterprise_gateway.py will skip" >&2
echo "setup: installed into .venv ($(.venv/bin/python --version)); kernels:"
.venv/bin/jupyter kernelspec list
.venv/bin/jupyter labextension list 2>&1 | grep -i logician || {
  echo "setup: the lab extension is not installed" >&2; exit 1; }
