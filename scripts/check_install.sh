#!/usr/bin/env bash
# A user's install, checked as CI runs it: a clean virtualenv, `pip install '.[lab]'` with only
# the virtualenv on PATH (no Node.js, no git), then the kernel and the lab extension are listed.
# Prints the install's wall time. Leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
start=$(date +%s)
PATH="$tmp/venv/bin" "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  ".[lab]" >"$tmp/pip.log" 2>&1 \
  || { echo "check_install: pip install '.[lab]' without Node.js failed:" >&2;
       tail -n 40 "$tmp/pip.log" >&2; exit 1; }
echo "check_install: pip install '.[lab]' without Node.js on PATH took $(( $(date +%s) - start )) s"
PATH="$tmp/venv/bin" "$tmp/venv/bin/jupyter" labextension list 2>&1 | grep -q "logician-kernel.*enabled.*OK" \
  || { echo "check_install: the lab extension is not listed after the install" >&2;
       PATH="$tmp/venv/bin" "$tmp/venv/bin/jupyter" labextension list >&2; exit 1; }
PATH="$tmp/venv/bin" "$tmp/venv/bin/jupyter" kernelspec list | grep -q " logician " \
  || { echo "check_install: the logician kernelspec is not listed after the install" >&2; exit 1; }
echo "check_install: the kernel and the lab extension are installed and listed"
