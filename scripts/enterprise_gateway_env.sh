#!/usr/bin/env bash
# Create .venv-eg: Jupyter Enterprise Gateway 3.3.0 for tests/kernel/test_kernel_enterprise_gateway.py.
# It cannot live in .venv: EG 3.3.0 requires jupyter_client<7, jupyter_server<2 and pyzmq<25,
# while JupyterLab 4, Kernel Gateway 3 and the kernel itself run on jupyter_client 8 and
# jupyter_server 2. The gateway runs from .venv-eg; the kernels it launches run in .venv.
# EG's kernel launchers (launch_ipykernel.py) ship in its source distribution, not its wheel:
# copied from there into .venv-eg/share/enterprise-gateway/kernel-launchers/.
# Idempotent: does nothing when .venv-eg is complete.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=3.3.0
VENV=.venv-eg
LAUNCHER=$VENV/share/enterprise-gateway/kernel-launchers/python/scripts/launch_ipykernel.py
if [ -x "$VENV/bin/jupyter-enterprisegateway" ] && [ -f "$LAUNCHER" ]; then
  exit 0
fi
PY=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet "jupyter_enterprise_gateway==$VERSION"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$VENV/bin/python" -m pip download --quiet --no-deps --no-binary :all: -d "$tmp" \
  "jupyter_enterprise_gateway==$VERSION"
tar -xzf "$tmp/jupyter_enterprise_gateway-$VERSION.tar.gz" -C "$tmp" \
  "jupyter_enterprise_gateway-$VERSION/etc/kernel-launchers/python/scripts/launch_ipykernel.py"
mkdir -p "$(dirname "$LAUNCHER")"
cp "$tmp/jupyter_enterprise_gateway-$VERSION/etc/kernel-launchers/python/scripts/launch_ipykernel.py" "$LAUNCHER"
echo "setup: Enterprise Gateway $VERSION in $VENV ($("$VENV/bin/jupyter-enterprisegateway" --version))"
