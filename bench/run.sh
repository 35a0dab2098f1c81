#!/usr/bin/env bash
# Benchmarks Warden against direct connections to the same MCP servers.
#
# Runs warden-bench (crates/bench) against:
#   1. the fixture server directly, and through `warden wrap`;
#   2. @modelcontextprotocol/server-everything (npm) directly, and through
#      `warden wrap` (skipped with SKIP_NODE=1);
#   3. `warden serve` with three fixture backends, for idle memory (VmRSS);
# then prints a summary: direct vs warden throughput and latency.
#
# Env knobs:
#   CALLS        calls per phase (default 5000)
#   CONCURRENCY  calls in flight in the concurrent phase (default 16)
#   WARMUP       unmeasured warm-up calls per run (default 500)
#   NODE_CALLS   calls per phase for server-everything (default: CALLS)
#   REPEAT       runs of each direct/warden pair; the summary shows medians (default 5)
#   SKIP_NODE=1  skip the server-everything runs (no node/npm needed)
#   SKIP_BUILD=1 use the release binaries already built
#   EVERYTHING_VERSION  npm version of server-everything (default below)
#   CARGO_TARGET_DIR    honoured, as by cargo
#
# Raw results (JSON lines from warden-bench --json) are kept in bench/.cache/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CALLS="${CALLS:-5000}"
CONCURRENCY="${CONCURRENCY:-16}"
WARMUP="${WARMUP:-500}"
NODE_CALLS="${NODE_CALLS:-$CALLS}"
REPEAT="${REPEAT:-5}"
SKIP_NODE="${SKIP_NODE:-0}"
SKIP_BUILD="${SKIP_BUILD:-0}"
EVERYTHING_VERSION="${EVERYTHING_VERSION:-2026.8.31}"
RSS_AFTER_MS=1000

die() {
    echo "run.sh: $*" >&2
    exit 1
}

command -v python3 >/dev/null || die "python3 is needed for the summary"

if [[ "$SKIP_BUILD" != 1 ]]; then
    echo "==> building release binaries" >&2
    if ! (cd "$root" && cargo build --release -p warden -p warden-fixture -p warden-bench); then
        die "cargo build failed (the warden, warden-fixture and warden-bench crates must all build)"
    fi
fi
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
bin="$target_dir/release"
bench="$bin/warden-bench"
warden="$bin/warden"
fixture="$bin/warden-fixture"
for b in "$bench" "$warden" "$fixture"; do
    [[ -x "$b" ]] || die "missing binary $b after build"
done

everything_js="$root/bench/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [[ "$SKIP_NODE" != 1 ]]; then
    command -v node >/dev/null || die "node is not installed (set SKIP_NODE=1 to skip server-everything)"
    if [[ ! -f "$everything_js" ]]; then
        command -v npm >/dev/null || die "npm is not installed (set SKIP_NODE=1 to skip server-everything)"
        echo "==> installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into bench/node_modules" >&2
        npm install --no-save --no-audit --no-fund --prefix "$root/bench" \
            "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2 ||
            die "npm install of server-everything failed"
    fi
    [[ -f "$everything_js" ]] || die "server-everything entry point not found at $everything_js"
fi

mkdir -p "$root/bench/.cache"
results="$root/bench/.cache/results-$(date +%Y%m%d-%H%M%S).jsonl"
: >"$results"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# bench LABEL CALLS [warden-bench options...] -- CMD ARGS...
bench() {
    local label="$1" calls="$2"
    shift 2
    local log="$tmp/${label//\//_}.log"
    echo "==> $label" >&2
    if ! "$bench" --json --label "$label" --calls "$calls" --concurrency "$CONCURRENCY" \
        --warmup "$WARMUP" "$@" >"$tmp/out.jsonl" 2>"$log"; then
        echo "run.sh: warden-bench failed for $label; its stderr (last 30 lines):" >&2
        tail -n 30 "$log" >&2
        exit 1
    fi
    cat "$tmp/out.jsonl" >&2
    cat "$tmp/out.jsonl" >>"$results"
}

# Warden with a realistic 200-rule policy loaded (150 rules for other tools,
# 50 that look at echo's argument and do not match): the guard's cost per call.
policy_config="$tmp/warden-policy-200.yaml"
python3 - "$fixture" >"$policy_config" <<'EOF'
import json, sys
fixture = json.dumps(sys.argv[1])
print("servers:")
print(f"  fixture:\n    transport: {{kind: stdio, command: {fixture}, args: []}}")
print("policy:\n  default: allow\n  rules:")
for i in range(150):
    print(f"    - {{name: other-{i}, if: {{tool: ['tool_{i}_*'], args: {{arg: path, startsWith: '/etc/{i}'}}}}, then: deny, reason: r}}")
for i in range(50):
    print(f"    - {{name: echo-{i}, if: {{tool: ['ec*'], args: {{any: [{{arg: text, contains: 'forbidden-{i}'}}, {{arg: n, gt: {i}}}]}}}}, then: deny, reason: r}}")
EOF

# Short phases on a 2-core machine are noisy: each pair runs REPEAT times,
# alternating which goes first, and the summary takes medians.
for ((round = 1; round <= REPEAT; round++)); do
    echo "==> round $round of $REPEAT" >&2
    pair=(fixture/direct fixture/warden)
    ((round % 2)) || pair=(fixture/warden fixture/direct)
    for label in "${pair[@]}"; do
        case "$label" in
            */direct) bench "$label" "$CALLS" -- "$fixture" ;;
            */warden) bench "$label" "$CALLS" -- "$warden" wrap -- "$fixture" ;;
        esac
    done
    pair=(policy200/direct policy200/warden)
    ((round % 2)) || pair=(policy200/warden policy200/direct)
    for label in "${pair[@]}"; do
        case "$label" in
            */direct) bench "$label" "$CALLS" -- "$fixture" ;;
            */warden) bench "$label" "$CALLS" -- "$warden" serve --config "$policy_config" ;;
        esac
    done
    if [[ "$SKIP_NODE" != 1 ]]; then
        node_args=(--args '{"message":"hello"}')
        pair=(everything/direct everything/warden)
        ((round % 2)) || pair=(everything/warden everything/direct)
        for label in "${pair[@]}"; do
            case "$label" in
                */direct) bench "$label" "$NODE_CALLS" "${node_args[@]}" -- node "$everything_js" stdio ;;
                */warden) bench "$label" "$NODE_CALLS" "${node_args[@]}" -- "$warden" wrap -- node "$everything_js" stdio ;;
            esac
        done
    fi
done

# Idle memory: the fixture alone, warden wrapping it, warden serving three.
config="$tmp/warden-3-fixtures.yaml"
python3 - "$fixture" >"$config" <<'EOF'
import json, sys
fixture = json.dumps(sys.argv[1])
print("servers:")
for name in ("fixture_a", "fixture_b", "fixture_c"):
    print(f"  {name}:")
    print(f"    transport: {{kind: stdio, command: {fixture}, args: []}}")
EOF
bench rss/fixture 0 --rss-of-child-after-ms "$RSS_AFTER_MS" -- "$fixture"
bench rss/warden-wrap 0 --rss-of-child-after-ms "$RSS_AFTER_MS" -- "$warden" wrap -- "$fixture"
bench rss/warden-serve-3 0 --rss-of-child-after-ms "$RSS_AFTER_MS" -- "$warden" serve --config "$config"

echo >&2
python3 - "$results" "$CALLS" "$NODE_CALLS" "$CONCURRENCY" "$WARMUP" <<'EOF'
import json, statistics, sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
grouped = {}
rss = {}
for r in rows:
    upstream, _, mode = r["label"].partition("/")
    if r["phase"] == "idle_rss":
        rss[mode] = r
    else:
        grouped.setdefault((upstream, mode, r["phase"]), []).append(r)

# Median of each metric over the repeated runs.
runs = {}
for key, rs in grouped.items():
    m = dict(rs[0])
    for f in ("calls_per_sec", "p50_us", "p90_us", "p99_us", "max_us"):
        m[f] = statistics.median(r[f] for r in rs)
    m["runs"] = len(rs)
    rates = [r["calls_per_sec"] for r in rs]
    med = m["calls_per_sec"]
    # Half the min-max range of calls/s, relative to the median.
    m["spread"] = (max(rates) - min(rates)) / 2 / med * 100 if med else 0.0
    runs[key] = m

n_runs = max((m["runs"] for m in runs.values()), default=0)
calls, node_calls, conc, warmup = sys.argv[2:6]
print(f"calls per phase: {calls} (server-everything: {node_calls}); "
      f"concurrency: {conc}; warm-up calls: {warmup}")
print(f"Warden vs direct, median of {n_runs} run(s) each (calls/s: higher is better; "
      f"latency in µs; ratio = warden/direct throughput)")
hdr = (f"{'upstream':<11} {'phase':<11} {'conc':>4} {'direct/s':>10} {'warden/s':>10} {'ratio':>6} "
       f"{'p50 dir':>8} {'p50 wdn':>8} {'+p50':>7} {'p99 dir':>8} {'p99 wdn':>8} {'+p99':>7} {'spread':>7}")
print(hdr)
print("-" * len(hdr))
upstreams = []
for (u, _, _) in runs:
    if u not in upstreams:
        upstreams.append(u)
for u in upstreams:
    for phase in ("sequential", "concurrent"):
        d = runs.get((u, "direct", phase))
        w = runs.get((u, "warden", phase))
        if not d or not w:
            continue
        ratio = w["calls_per_sec"] / d["calls_per_sec"] if d["calls_per_sec"] else float("nan")
        print(f"{u:<11} {phase:<11} {d['concurrency']:>4} {d['calls_per_sec']:>10.0f} "
              f"{w['calls_per_sec']:>10.0f} {ratio:>6.2f} "
              f"{d['p50_us']:>8.1f} {w['p50_us']:>8.1f} {w['p50_us'] - d['p50_us']:>+7.1f} "
              f"{d['p99_us']:>8.1f} {w['p99_us']:>8.1f} {w['p99_us'] - d['p99_us']:>+7.1f} "
              f"{'±%.0f%%' % max(d['spread'], w['spread']):>7}")
print("spread: half the min-max range of calls/s over the runs, relative to the median "
      "(the larger of direct's and warden's): a rough guide to run-to-run noise.")
print()
names = {
    "fixture": "fixture server alone",
    "warden-wrap": "warden wrap (1 fixture backend)",
    "warden-serve-3": "warden serve (3 fixture backends)",
}
print("Idle memory (VmRSS of the process itself, backends not included):")
for key, desc in names.items():
    r = rss.get(key)
    if r:
        print(f"  {desc:<36} {r['rss_mb']:>7.1f} MB ({r['rss_kb']} kB)")
EOF
echo >&2
echo "Policy decision time (200 rules, in process):"
(cd "$root" && cargo run --quiet --release -p warden-policy --example decide_bench)
echo >&2
echo "raw results: $results" >&2
