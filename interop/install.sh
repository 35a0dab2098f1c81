#!/usr/bin/env bash
# Installs the official MCP SDKs the interop tests drive, pinned: the Python
# SDK (mcp==2.3.0, both eras) into interop/.venv and its 1.x (mcp==1.30.0,
# 2025 only) into interop/.venv1, and the TypeScript ones
# (client 2.4.0, sdk 1.32.2, server 2.4.0) and Claude Code 2.1.330 into
# interop/node_modules as package-lock.json pins them. Needs python3 (3.10+) and npm; does nothing when installed.
set -euo pipefail
cd "$(dirname "$0")"

stamp=.venv/.warden-installed
if [[ ! -f $stamp ]] || ! cmp -s requirements.txt "$stamp"; then
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    cp requirements.txt "$stamp"
fi
stamp1=.venv1/.warden-installed
if [[ ! -f $stamp1 ]] || ! cmp -s requirements-1.txt "$stamp1"; then
    rm -rf .venv1
    python3 -m venv .venv1
    .venv1/bin/pip install --quiet --disable-pip-version-check -r requirements-1.txt
    cp requirements-1.txt "$stamp1"
fi
version() { "$1" -c 'import importlib.metadata as m; print(m.version("mcp"))'; }
echo "interop: Python SDKs $(version .venv/bin/python) and $(version .venv1/bin/python)"

npm_stamp=node_modules/.warden-installed-lock
if [[ ! -f $npm_stamp ]] || ! cmp -s package-lock.json "$npm_stamp"; then
    npm ci --no-audit --no-fund --engine-strict=false --loglevel=error
    cp package-lock.json "$npm_stamp"
fi
echo "interop: TypeScript SDKs and Claude Code installed"
