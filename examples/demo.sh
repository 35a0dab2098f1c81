#!/usr/bin/env bash
# Runs Warden's main job on the bundled example: builds warden and the fixture
# server, then plays a short MCP session through `warden serve` and prints
# every message Warden sends back.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p warden -p warden-fixture
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  sleep 0.5   # the backends start in the background; list_changed tells the client
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"files__echo","arguments":{"text":"hello through warden"}}}'
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notes__progress","arguments":{"steps":2},"_meta":{"progressToken":"p1"}}}'
  echo '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"fixture://readme"}}'
  sleep 0.5
} | target/debug/warden --log-level error serve --config examples/warden.yaml | python3 -c '
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("id") == 2:
        names = [t["name"] for t in msg["result"]["tools"]]
        print("<- tools/list:", len(names), "tools:", " ".join(names[:6]), "...")
    else:
        print("<-", line.strip()[:200])
'

# Part two: a policy refuses one call, and a DROP waits until someone approves
# it (here the script itself, with `warden approvals approve`).
echo
echo "== policies and approvals (examples/approvals.yaml) =="
export WARDEN_APPROVALS_SOCKET="${TMPDIR:-/tmp}/warden-demo-$$.sock" WARDEN_APPROVAL_LISTEN=127.0.0.1:0
# A fresh log: the log and its sync journal go together.
rm -f /tmp/warden-example-audit.jsonl /tmp/.warden-example-audit.jsonl.sync
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  sleep 0.5
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"db__echo","arguments":{"text":"SELECT * FROM users"}}}'
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"db__echo","arguments":{"text":"DROP TABLE sessions"},"_meta":{"progressToken":"drop"}}}'
  sleep 0.5
  echo "-- warden approvals list:" >&2
  target/debug/warden approvals list >&2
  id=$(target/debug/warden approvals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pending"][0]["id"])')
  echo "-- warden approvals approve ${id:0:8}:" >&2
  target/debug/warden approvals approve "${id:0:8}" >&2
  sleep 0.5
} | target/debug/warden --log-level error serve --config examples/approvals.yaml 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    print("<-", line.strip()[:200], flush=True)
'
echo "-- warden audit verify:"
target/debug/warden audit verify /tmp/warden-example-audit.jsonl
