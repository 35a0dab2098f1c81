#!/usr/bin/env bash
# Counts the user-space instructions Warden executes per forwarded call,
# with valgrind's callgrind (Debian package `valgrind`): a figure that does
# not move with the machine's load, where calls per second and CPU time on
# a shared 2-core VM vary by ±15% from one run to the next. It does not see
# the kernel's share (system calls, wake-ups), which `bench/run.sh`'s CPU
# times do.
#
# Each case runs twice, with CALLS and 3 x CALLS calls in each of
# warden-bench's two phases (one call at a time, then 16 in flight), and
# the difference is divided by the calls it added, so start-up and
# shutdown cancel out. Prints one JSON line per case: {"label":
# "instructions/<case>", "phase": "instructions", "instructions_per_call": N}.
#
# Cases, all `warden serve` with the fixture behind it over stdio: `none`
# (nothing watching), `sequential` (the same, one call at a time in both
# phases: what a client that waits for each answer costs), `metrics` (the
# Prometheus listener on), `traces`
# (every request traced, exported to a local sink); and `relay`, the bare
# relay (`warden-bench --relay-bare`), the floor of any stdio hop. Over
# HTTP: `http2025` (`warden serve --http`, one 2025 session), `http2026`
# (the same front, MCP 2026-07-28 requests served by the lane) and
# `bridge`, the bare HTTP-to-stdio bridge (`warden-bench --bridge-bare`).
#
# usage: [CASES="none http2025 ..."] bench/instructions.sh BIN_DIR [CALLS]   (BIN_DIR: the release binaries)
set -euo pipefail

bin="$1"
# WARDEN: another build of warden to measure (bench/pgo.sh's).
warden="${WARDEN:-$bin/warden}"
calls="${2:-2000}"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$bin/warden-bench" --serve-bare 127.0.0.1:0 >"$tmp/sink.log" 2>&1 &
for _ in $(seq 100); do
    grep -q 'http://' "$tmp/sink.log" && break
    sleep 0.1
done
sink="$(grep -o 'http://[^ ]*' "$tmp/sink.log" | head -1)"
[[ -n "$sink" ]] || { echo "instructions.sh: the trace sink did not start" >&2; exit 1; }

servers="$(printf 'servers:\n  fixture:\n    transport: {kind: stdio, command: "%s", args: []}\n' "$bin/warden-fixture")"
printf '%s\n' "$servers" >"$tmp/none.yaml"
printf '%s\nmetrics: {listen: "127.0.0.1:0", open: true}\n' "$servers" >"$tmp/metrics.yaml"
printf '%s\ntracing: {otlp: "%s", sampleRatio: 1}\n' "$servers" "${sink%/mcp}/v1/traces" >"$tmp/traces.yaml"

# instructions_http CASE N: the same, for a server on HTTP that warden-bench
# calls (stopped with SIGTERM, on which callgrind writes its counts; the
# bare bridge under valgrind does not stop on SIGINT).
instructions_http() {
    local out="$tmp/$1-$2.callgrind" log="$tmp/$1-$2.log" measured era=() url="" pid
    case "$1" in
        bridge) measured=("$bin/warden-bench" --bridge-bare 127.0.0.1:0 -- "$bin/warden-fixture") ;;
        *) measured=("$warden" serve --config "$tmp/none.yaml" --http 127.0.0.1:0) ;;
    esac
    [[ $1 == http2026 ]] && era=(--modern)
    valgrind --tool=callgrind --callgrind-out-file="$out" "${measured[@]}" >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do
        url="$(grep -o 'http://[^ ]*/mcp' "$log" | head -1 || true)"
        [[ -n "$url" ]] && break
        sleep 0.1
    done
    [[ -n "$url" ]] || { echo "instructions.sh: $1 did not start" >&2; tail -5 "$log" >&2; return 1; }
    "$bin/warden-bench" --calls "$2" --warmup 100 --concurrency 16 --url "$url" "${era[@]}" >"$tmp/$1-$2.bench" 2>&1
    kill -TERM "$pid"
    wait "$pid" || true
    callgrind_annotate --auto=no "$out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 } END { print total }'
}

# instructions CASE N: what callgrind counted in the measured process over N calls per phase.
instructions() {
    if [[ $1 == http2025 || $1 == http2026 || $1 == bridge ]]; then
        instructions_http "$@"
        return
    fi
    local out="$tmp/$1-$2.callgrind" measured in_flight=16
    case "$1" in
        relay) measured=("$bin/warden-bench" --relay-bare -- "$bin/warden-fixture") ;;
        sequential)
            measured=("$warden" serve --config "$tmp/none.yaml")
            in_flight=1
            ;;
        *) measured=("$warden" serve --config "$tmp/$1.yaml") ;;
    esac
    "$bin/warden-bench" --calls "$2" --warmup 100 --concurrency "$in_flight" -- \
        valgrind --tool=callgrind --callgrind-out-file="$out" "${measured[@]}" >"$tmp/$1-$2.log" 2>&1
    callgrind_annotate --auto=no "$out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 } END { print total }'
}

# CASES (environment): which to count, by default all of them.
for case in ${CASES:-none sequential metrics traces relay http2025 http2026 bridge}; do
    few="$(instructions "$case" "$calls")"
    many="$(instructions "$case" $((3 * calls)))"
    [[ -n "$few" && -n "$many" ]] || { echo "instructions.sh: no callgrind totals for $case" >&2; exit 1; }
    printf '{"label": "instructions/%s", "phase": "instructions", "instructions_per_call": %d}\n' \
        "$case" $(((many - few) / (4 * calls)))
done
