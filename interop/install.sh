#!/usr/bin/env bash
# Installs the official MCP SDKs the interop tests drive, pinned: the Python
# SDK (mcp==2.3.0, both eras) into interop/.venv and its 1.x (mcp==1.30.0,
# 2025 only) into interop/.venv1, and the TypeScript ones
# (client 2.4.0, sdk 1.32.2, server 2.4.0) and Claude Code 2.1.330 into
# interop/node_modules as package-lock.json pins them. Also the real
# third-party MCP servers the shipped annotations and presets name
# (crates/warden/tests/known_servers.rs): server-filesystem, server-postgres,
# server-memory, server-github, server-puppeteer and @playwright/mcp (without
# their browsers) in node_modules too, desktop-commander in desktop-commander/node_modules (its
# own lock), the Python servers on mcp 2.x (fetch, git, time) in .venv-servers
# and those on mcp 1.x (shell, sqlite) in .venv-servers1. Needs python3
# (3.11+) and npm; does nothing when installed.
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
# The real Python servers: a venv per requirements file, reinstalled when the
# file changes (their `mcp` pins conflict with each other and with the SDKs').
venv() { # directory requirements
    local stamp=$1/.warden-installed
    if [[ ! -f $stamp ]] || ! cmp -s "$2" "$stamp"; then
        rm -rf "$1"
        python3 -m venv "$1"
        "$1"/bin/pip install --quiet --disable-pip-version-check -r "$2"
        cp "$2" "$stamp"
    fi
}
venv .venv-servers requirements-servers.txt
venv .venv-servers1 requirements-servers-1.txt
version() { "$1" -c 'import importlib.metadata as m; print(m.version("mcp"))'; }
echo "interop: Python SDKs $(version .venv/bin/python) and $(version .venv1/bin/python)"

# Without the browsers Playwright and Puppeteer would download from their
# vendors' sites: the tests only list those servers' tools.
npm_stamp=node_modules/.warden-installed-lock
if [[ ! -f $npm_stamp ]] || ! cmp -s package-lock.json "$npm_stamp"; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
        npm ci --no-audit --no-fund --engine-strict=false --loglevel=error
    cp package-lock.json "$npm_stamp"
fi
# desktop-commander has its own lock: 683 packages (about 260 MB). Its
# scripts are not run (the postinstall reports the install over the network
# and downloads ripgrep from GitHub), nor is puppeteer's browser downloaded.
dc_stamp=desktop-commander/node_modules/.warden-installed-lock
if [[ ! -f $dc_stamp ]] || ! cmp -s desktop-commander/package-lock.json "$dc_stamp"; then
    (cd desktop-commander && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp desktop-commander/package-lock.json "$dc_stamp"
fi
echo "interop: TypeScript SDKs, Claude Code and the real MCP servers installed"
