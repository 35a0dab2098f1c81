#!/usr/bin/env bash
# What the per-server sandbox costs: server start time and per-call latency,
# `warden wrap -- SERVER` against `warden wrap --sandbox=POLICY -- SERVER`,
# with the fixture and (unless SKIP_NODE=1, or bench/node_modules lacks it;
# bench/run.sh installs it) @modelcontextprotocol/server-everything.
#
# Start time is warden-bench's "ready in N ms": from spawning warden to the
# server's tool showing up in tools/list (warden start, bwrap, sandbox-init,
# the server's start and the MCP handshake). Per-call latency is the
# sequential phase's p50 and calls/s.
#
# Env knobs: CALLS (default 3000), WARMUP (500), STARTS (starts measured per
# variant, default 15), REPEAT (latency runs per variant, default 3),
# SKIP_NODE=1, SKIP_BUILD=1, CARGO_TARGET_DIR.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CALLS="${CALLS:-3000}"
WARMUP="${WARMUP:-500}"
STARTS="${STARTS:-15}"
REPEAT="${REPEAT:-3}"
SKIP_NODE="${SKIP_NODE:-0}"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    (cd "$root" && cargo build --release -p warden -p warden-fixture -p warden-bench) >&2
fi
target_dir="${CARGO_TARGET_DIR:-$root/target}"
bin="$target_dir/release"
warden="$bin/warden" fixture="$bin/warden-fixture" bench="$bin/warden-bench"
"$warden" sandbox check >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The policy: no network, read the repository (server-everything's code).
printf '{filesystem: {read: ["%s"]}}\n' "$root" >"$tmp/policy.yaml"
everything="$root/bench/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

# measure NAME BENCH_ARGS... -- SERVER...: start times and latency, plain and sandboxed.
measure() {
    local name="$1" variant i
    shift
    local args=() server=()
    while [[ "$1" != -- ]]; do args+=("$1"); shift; done
    shift
    server=("$@")
    for variant in plain sandboxed; do
        local wrap=("$warden" wrap)
        [[ "$variant" == sandboxed ]] && wrap+=(--sandbox="$tmp/policy.yaml")
        for ((i = 0; i < STARTS; i++)); do
            "$bench" --calls 1 --warmup 0 --concurrency 1 "${args[@]}" -- "${wrap[@]}" -- "${server[@]}" \
                2>&1 >/dev/null | sed -n "s/.*ready in \([0-9]*\) ms.*/$name $variant start \1/p"
        done
        for ((i = 0; i < REPEAT; i++)); do
            "$bench" --json --label "$name/$variant" --calls "$CALLS" --warmup "$WARMUP" --concurrency 1 \
                "${args[@]}" -- "${wrap[@]}" -- "${server[@]}" 2>/dev/null | grep '"sequential"'
        done
    done
}

{
    measure fixture -- "$fixture"
    if [[ "$SKIP_NODE" != 1 && -f "$everything" ]]; then
        measure everything --args '{"message":"hello"}' -- node "$everything" stdio
    fi
} >"$tmp/results"

python3 - "$tmp/results" <<'PY'
import json, statistics, sys
starts, calls = {}, {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        row = json.loads(line)
        calls.setdefault(row["label"], []).append(row)
    else:
        name, variant, _, ms = line.split()
        starts.setdefault(f"{name}/{variant}", []).append(int(ms))
print("| server | variant | start p50 (ms) | start min–max | call p50 (µs) | calls/s |")
print("|---|---|---|---|---|---|")
for label in sorted(starts):
    s = starts[label]
    rows = calls.get(label, [])
    p50 = statistics.median(r["p50_us"] for r in rows) if rows else float("nan")
    rate = statistics.median(r["calls_per_sec"] for r in rows) if rows else float("nan")
    name, variant = label.split("/")
    print(f"| {name} | {variant} | {statistics.median(s):.0f} | {min(s)}–{max(s)} | {p50:.1f} | {rate:,.0f} |")
PY
