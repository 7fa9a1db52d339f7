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
# Each listing is read whole before it is searched: `jupyter ... | grep -q` under pipefail
# fails when grep stops reading at the first match and the listing's next line meets a
# closed pipe (BrokenPipeError), though the line was there.
extensions=$(PATH="$tmp/venv/bin" "$tmp/venv/bin/jupyter" labextension list 2>&1 || true)
grep -q "logician-kernel.*enabled.*OK" <<<"$extensions" \
  || { echo "check_install: the lab extension is not listed after the install" >&2;
       echo "$extensions" >&2; exit 1; }
kernels=$(PATH="$tmp/venv/bin" "$tmp/venv/bin/jupyter" kernelspec list 2>&1 || true)
grep -q " logician " <<<"$kernels" \
  || { echo "check_install: the logician kernelspec is not listed after the install" >&2;
       echo "$kernels" >&2; exit 1; }
echo "check_install: the kernel and the lab extension are installed and listed"
