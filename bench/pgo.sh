#!/usr/bin/env bash
# Builds `warden` with profile-guided optimisation (PGO): an instrumented
# build serves a training load, LLVM merges what it counted, and the release
# build inlines and lays out the code by those counts (hot paths together,
# cold ones out of the way). The code is the same; only how it is compiled
# changes. The binary lands in target/pgo/release/warden; the plain
# target/release/warden is left as it is.
#
# The training load is what Warden spends its time on, through both fronts
# and both eras: `tools/call` to the repository's fixture over stdio
# (`warden serve` and `warden wrap`) and over HTTP (a 2025 session and
# 2026-07-28 requests), one at a time and 16 in flight, with nothing
# configured, then with a policy whose rules read the arguments (SQL
# included), the audit log, the metrics listener and traces (every request,
# to a local sink) on. A path it does not train (approvals, the sandbox's
# start) is compiled as well as in the plain build, but not laid out for
# speed.
#
# Needs `llvm-profdata` of the LLVM that rustc uses (`rustc -vV`): found as
# `llvm-profdata-N` (Debian package `llvm-N`), in rustup's `llvm-tools`
# component, as a plain `llvm-profdata` of that version, or given as
# LLVM_PROFDATA=path. Takes two release builds (about 15 minutes on 2 cores).
#
# usage: bench/pgo.sh [CALLS]   (calls per training phase, default 3000)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
calls="${1:-3000}"
gen="$root/target/pgo-gen"
data="$gen/profiles"
out="$root/target/pgo"

die() {
    echo "pgo.sh: $*" >&2
    exit 1
}

# The llvm-profdata whose major version is rustc's LLVM's.
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
[[ -n "$major" ]] || die "rustc -vV names no LLVM version"
version_of() { "$1" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -1; }
profdata="${LLVM_PROFDATA:-}"
if [[ -z "$profdata" ]]; then
    for candidate in "llvm-profdata-$major" "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata llvm-profdata; do
        path="$(command -v "$candidate" || true)"
        if [[ -n "$path" && "$(version_of "$path")" == "$major" ]]; then
            profdata="$path"
            break
        fi
    done
fi
[[ -n "$profdata" ]] || die "no llvm-profdata of LLVM $major (install the Debian package llvm-$major, or: rustup component add llvm-tools)"

# The same build as bench/run.sh's (the same three packages: their shared
# dependencies' features unify the same way), for the driver and upstream.
echo "==> the plain release build (target/release)" >&2
(cd "$root" && cargo build --release -p warden -p warden-fixture -p warden-bench)
bin="$root/target/release"

echo "==> the instrumented warden (target/pgo-gen)" >&2
rm -rf "$data"
mkdir -p "$data"
(cd "$root" && CARGO_TARGET_DIR="$gen" RUSTFLAGS="-Cprofile-generate=$data" cargo build --release -p warden)
warden="$gen/release/warden"

tmp="$(mktemp -d)"
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$tmp"' EXIT
# url_in LOG WHAT: the http://.../mcp address a server just started in the
# background writes in LOG, once it has; stops the script, naming WHAT, if
# none comes within 30 seconds.
url_in() {
    local log="$1" what="$2" url=""
    for _ in $(seq 300); do
        url="$(grep -o 'http://[^ ]*/mcp' "$log" | head -1 || true)"
        [[ -n "$url" ]] && { echo "$url"; return 0; }
        sleep 0.1
    done
    die "$what did not start: $(tail -3 "$log")"
}
# Where the guarded configuration's traces go: a bare endpoint that reads
# each POST and answers 202, as in bench/run.sh.
"$bin/warden-bench" --serve-bare 127.0.0.1:0 >"$tmp/sink.log" 2>&1 &
sink="$(url_in "$tmp/sink.log" "the trace sink")"
servers="$(printf 'servers:\n  fixture:\n    transport: {kind: stdio, command: "%s", args: []}\n' "$bin/warden-fixture")"
printf '%s\n' "$servers" >"$tmp/plain.yaml"
cat >"$tmp/guarded.yaml" <<EOF
$servers
audit: {path: "$tmp/audit.jsonl"}
metrics: {listen: "127.0.0.1:0", open: true}
tracing: {otlp: "${sink%/mcp}/v1/traces", sampleRatio: 1}
policy:
  rules:
    - {name: no-drops, if: {tool: [echo], args: {arg: text, contains: DROP}}, then: deny, reason: no DROP here}
    - {name: bounded-selects, if: {tool: [echo], args: {arg: text, sql: {selectWithoutLimit: true}}}, then: deny}
    - {name: notes, if: {tool: [echo], args: {arg: text, regex: "^note:"}}, then: log}
EOF

# Every process writes its own counts when it exits.
export LLVM_PROFILE_FILE="$data/warden-%p-%m.profraw"
# The arguments each configuration's calls carry: SQL that the guarded
# policy parses and lets through.
args_plain='{"text":"hello"}'
args_guarded='{"text":"SELECT id FROM t LIMIT 5"}'
train_http() {
    local config="$1" args="$2" url pid
    "$warden" serve --config "$config" --http 127.0.0.1:0 >"$tmp/http.log" 2>&1 &
    pid=$!
    url="$(url_in "$tmp/http.log" "the instrumented warden")"
    for in_flight in 1 16; do
        "$bin/warden-bench" --calls "$calls" --warmup 100 --concurrency "$in_flight" --args "$args" --url "$url" >/dev/null
        "$bin/warden-bench" --calls "$calls" --warmup 100 --concurrency "$in_flight" --args "$args" --url "$url" \
            --modern >/dev/null
    done
    kill -TERM "$pid"
    wait "$pid" || true
}
for config in plain guarded; do
    echo "==> training: $config, stdio and HTTP" >&2
    args_of="args_$config"
    for in_flight in 1 16; do
        "$bin/warden-bench" --calls "$calls" --warmup 100 --concurrency "$in_flight" --args "${!args_of}" -- \
            "$warden" serve --config "$tmp/$config.yaml" >/dev/null 2>&1
    done
    train_http "$tmp/$config.yaml" "${!args_of}"
done
"$bin/warden-bench" --calls "$calls" --warmup 100 --concurrency 1 -- \
    "$warden" wrap -- "$bin/warden-fixture" >/dev/null 2>&1
unset LLVM_PROFILE_FILE

profiles=("$data"/warden-*.profraw)
[[ -e "${profiles[0]}" ]] || die "the training wrote no profiles"
echo "==> merging ${#profiles[@]} profiles with $profdata" >&2
"$profdata" merge -o "$data/merged.profdata" "${profiles[@]}"

echo "==> the optimised warden (target/pgo)" >&2
(cd "$root" && CARGO_TARGET_DIR="$out" RUSTFLAGS="-Cprofile-use=$data/merged.profdata" cargo build --release -p warden)
echo "$out/release/warden"
