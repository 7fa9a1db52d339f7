#!/usr/bin/env bash
# Create .venv and install Logician Kernel with its test tools, from this checkout only.
# With Node.js it rebuilds the lab extension from labextension/src (without, the committed
# build is used). The browser tests need Debian's
# Chromium, the console test tmux: both installed here with apt-get when missing and we are root.
# Idempotent: re-running it refreshes the install.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "setup: git is required (apt-get install git)" >&2; exit 2; }
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
# The lab extension is committed prebuilt (logician_kernel/labextension/); with Node.js it is
# rebuilt here from labextension/src first (jlpm comes with JupyterLab), so the install below
# ships what the sources say, and scripts/test.sh checks the committed copy is that build.
if command -v node >/dev/null; then
  .venv/bin/python -m pip install --quiet "jupyterlab>=4.4,<5"
  (cd labextension && export PATH="$PWD/../.venv/bin:$PATH" &&
    { [ -d node_modules ] || jlpm install; } && jlpm build:prod >/dev/null)
else
  echo "setup: no Node.js: using the committed build of the lab extension (rebuilding it needs Node.js)" >&2
fi
# The extension was built above (or is the committed one): the build hook has nothing to do.
SKIP_JUPYTER_BUILDER=1 .venv/bin/python -m pip install --quiet -e ".[test]"
# .venv-eg: Enterprise Gateway cannot share .venv (see the script); without it its test skips.
bash scripts/enterprise_gateway_env.sh ||
  echo "setup: Enterprise Gateway was not installed; tests/kernel/test_kernel_enterprise_gateway.py will skip" >&2
echo "setup: installed into .venv ($(.venv/bin/python --version)); kernels:"
.venv/bin/jupyter kernelspec list
.venv/bin/jupyter labextension list 2>&1 | grep -i logician || {
  echo "setup: the lab extension is not installed" >&2; exit 1; }
