#!/usr/bin/env bash
# Counts Warden's heap allocations per forwarded call with heaptrack
# (Debian package `heaptrack`): each case runs twice, with CALLS and
# 3 x CALLS calls in each of warden-bench's two phases, and the difference
# is divided by the calls it added, so start-up and shutdown cancel out.
# Prints one JSON line per case: {"label": "alloc/<case>", "phase":
# "allocations", "allocs_per_call": N}.
#
# Cases: stdio (`warden wrap` around the fixture), http2025 (`warden serve
# --http`, one 2025 session) and http2026 (the same front, MCP 2026-07-28
# requests served by the lane).
#
# Warden runs on mimalloc, which heaptrack does not see: the counts are
# taken with the system allocator (WARDEN_ALLOCATOR=system), which the same
# code calls exactly as often.
#
# usage: bench/allocations.sh BIN_DIR [CALLS]   (BIN_DIR: the release binaries)
set -euo pipefail
export WARDEN_ALLOCATOR=system

bin="$1"
# WARDEN: another build of warden to measure (bench/pgo.sh's).
warden="${WARDEN:-$bin/warden}"
calls="${2:-500}"
command -v heaptrack >/dev/null || { echo "allocations.sh: heaptrack is not installed" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT

config="$tmp/fixture.yaml"
printf 'servers:\n  fixture:\n    transport: {kind: stdio, command: "%s", args: []}\n' "$bin/warden-fixture" >"$config"

# allocations OUTPUT: the count heaptrack printed at the end of OUTPUT.
allocations() {
    local count
    count="$(grep -A1 'heaptrack stats' "$1" | sed -n 's/.*allocations:[^0-9]*\([0-9]*\).*/\1/p' | head -1)"
    [[ -n "$count" ]] || { echo "allocations.sh: no heaptrack stats in $1" >&2; tail -5 "$1" >&2; exit 1; }
    echo "$count"
}

# count_stdio N: allocations of `warden wrap` over N calls per phase.
count_stdio() {
    "$bin/warden-bench" --calls "$1" --warmup 0 --concurrency 1 -- \
        heaptrack -o "$tmp/stdio-$1" "$warden" wrap -- "$bin/warden-fixture" >"$tmp/stdio-$1.log" 2>&1
    allocations "$tmp/stdio-$1.log"
}

# count_http N [warden-bench options]: allocations of `warden serve --http`
# over N calls per phase.
count_http() {
    local n="$1" log="$tmp/http-$1-$#.log" url pid
    shift
    heaptrack -o "$tmp/http-$n" "$warden" serve --config "$config" --http 127.0.0.1:0 >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 200); do
        url="$(grep -o 'http://[0-9.:]*/mcp' "$log" | head -1 || true)"
        [[ -n "$url" ]] && break
        sleep 0.05
    done
    [[ -n "$url" ]] || { echo "allocations.sh: warden serve did not start" >&2; tail -5 "$log" >&2; exit 1; }
    "$bin/warden-bench" --url "$url" --calls "$n" --warmup 0 --concurrency 1 "$@" >"$tmp/bench-$n.log" 2>&1
    # heaptrack's child is warden: it stops on SIGINT and heaptrack writes its stats.
    pkill -INT -P "$pid" 2>/dev/null || kill -INT "$pid"
    wait "$pid" || true
    allocations "$log"
}

report() {
    local label="$1" small="$2" large="$3"
    python3 -c "import json,sys; print(json.dumps({'label': sys.argv[1], 'phase': 'allocations', \
'allocs_per_call': round((int(sys.argv[3]) - int(sys.argv[2])) / (2 * 2 * int(sys.argv[4])), 1)}))" \
        "$label" "$small" "$large" "$calls"
}

report alloc/stdio "$(count_stdio "$calls")" "$(count_stdio $((3 * calls)))"
report alloc/http2025 "$(count_http "$calls")" "$(count_http $((3 * calls)))"
report alloc/http2026 "$(count_http "$calls" --modern)" "$(count_http $((3 * calls)) --modern)"
