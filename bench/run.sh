#!/usr/bin/env bash
# Benchmarks Warden against direct connections to the same MCP servers.
#
# Runs warden-bench (crates/bench) against:
#   1. the fixture server directly, and through `warden wrap`; and through
#      a bare relay (`fixture/bare`, `warden-bench --relay-bare`: two
#      threads copying stdin and stdout), the floor of any stdio hop;
#   2. @modelcontextprotocol/server-everything (npm) directly, and through
#      `warden wrap` (skipped with SKIP_NODE=1);
#   3. `warden serve` with three fixture backends, for idle memory (VmRSS);
#   4. the HTTP front (skipped with SKIP_HTTP=1), with CONCURRENCY calls in
#      flight on one session (`http1/...`) and on CONCURRENCY sessions
#      (`http16/...` by default), each in-flight slot on a keep-alive
#      connection of its own:
#        - `warden serve --http` with the fixture behind it over stdio;
#        - supergateway (npm, installed by this script) bridging the same
#          fixture to Streamable HTTP (`--stateful`), what a user would
#          otherwise pick (skipped with SKIP_NODE=1);
#        - on one session, a bare HTTP-to-stdio bridge to the same fixture
#          (`http1/bare`, `warden-bench --bridge-bare`), the floor of any
#          HTTP front over a stdio server;
#      compared with each other and with the fixture called directly over stdio;
#      and `modern/warden`: the same front, with MCP 2026-07-28 requests
#      (no session: each served by the lane), beside `http1/warden`;
#   5. two hops (`hop/...`; skipped with SKIP_HTTP=1, and when this build's
#      warden cannot use an HTTP upstream): client -> warden (HTTP front) ->
#      warden (HTTP front) -> fixture, against client -> that second warden
#      directly: what Warden adds per call in front of an HTTP upstream; and
#      the same hop through a bare hyper forwarder (`hop/bare`,
#      `warden-bench --forward-bare`), the floor of any hop on this machine;
#   6. the audit log (`audit/...`): `warden serve` with the fixture and no
#      audit, `fsync: always` and `fsync: never` (the log in bench/.cache/audit,
#      removed after each run), `fsync: always` with the log in RAM
#      (`audit/ram`, /dev/shm: group commit without a disk), and the disk's
#      own latency of a durable append in bench/.cache/audit
#      (`warden-bench --disk-sync-in`), measured in the same rounds;
#   7. `ping` over HTTP (`ping/...`; skipped with SKIP_HTTP=1): warden's
#      HTTP front against a bare hyper endpoint answering the same JSON
#      (`warden-bench --serve-bare`), the floor for any HTTP front;
#   8. server-everything with the official TypeScript SDK client
#      (`tseverything/...`, bench/ts-client.mjs; skipped with SKIP_NODE=1),
#      directly, through `warden wrap`, and through the bare relay
#      (`tseverything/bare`), the floor of any stdio hop for this pair;
#   9. joshrotenberg/mcp-proxy 0.6.0 beside warden's HTTP front
#      (`http1/mcp-proxy`, `http16/mcp-proxy`) when its binary is found;
#  10. `warden serve` with metrics on (`metrics/on`) against the same serve
#      with metrics off (`metrics/off`): what counting costs per call; and
#      with traces exported at 100% to a local sink (`traces/on`);
# then prints a summary: direct vs warden throughput and latency, and
# (bench/front.py) the fronts' own cost: ping against the floor, the added
# hop, warden's CPU time per call in every run (user + system of the warden
# process, measured by warden-bench from /proc), the TypeScript client's
# ratios and the peer's.
#
# Env knobs:
#   CALLS        calls per phase (default 5000)
#   CONCURRENCY  calls in flight in the concurrent phase (default 16)
#   WARMUP       unmeasured warm-up calls per run (default 500)
#   NODE_CALLS   calls per phase for server-everything (default: CALLS)
#   REPEAT       runs of each direct/warden pair; the summary shows medians (default 5)
#   HTTP_CALLS   calls per phase for the HTTP runs (default: CALLS)
#   SKIP_NODE=1  skip the server-everything and supergateway runs (no node/npm needed)
#   SKIP_HTTP=1  skip the HTTP runs (warden's HTTP front, supergateway, two hops)
#   SKIP_AUDIT=1 skip the audit runs
#   SKIP_ALLOC=1 skip counting allocations per call (bench/allocations.sh, needs heaptrack)
#   SKIP_INSTR=1 skip counting instructions per call (bench/instructions.sh, needs valgrind)
#   AUDIT_ONLY=1 run only the audit runs (and no memory or policy timing)
#   AUDIT_CALLS  calls per phase for the audit runs (default: CALLS)
#   DISK_WRITES  durable appends measured per round for the disk's own latency (default 1000)
#   SKIP_BUILD=1 use the release binaries already built
#   WARDEN       the warden binary to measure (default: the release build's;
#                target/pgo/release/warden after bench/pgo.sh)
#   MCP_PROXY    path of the mcp-proxy binary (default: mcp-proxy on PATH)
#   EVERYTHING_VERSION  npm version of server-everything (default below)
#   SUPERGATEWAY_VERSION  npm version of supergateway (default below)
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
HTTP_CALLS="${HTTP_CALLS:-$CALLS}"
SKIP_NODE="${SKIP_NODE:-0}"
SKIP_HTTP="${SKIP_HTTP:-0}"
SKIP_BUILD="${SKIP_BUILD:-0}"
SKIP_AUDIT="${SKIP_AUDIT:-0}"
AUDIT_ONLY="${AUDIT_ONLY:-0}"
AUDIT_CALLS="${AUDIT_CALLS:-$CALLS}"
DISK_WRITES="${DISK_WRITES:-1000}"
if [[ "$AUDIT_ONLY" == 1 ]]; then
    SKIP_NODE=1
    SKIP_HTTP=1
    SKIP_AUDIT=0
fi
EVERYTHING_VERSION="${EVERYTHING_VERSION:-2026.8.31}"
SUPERGATEWAY_VERSION="${SUPERGATEWAY_VERSION:-4.0.0}"
SDK_VERSION="${SDK_VERSION:-1.32.2}"
# joshrotenberg/mcp-proxy 0.6.0 (`cargo install mcp-proxy --version 0.6.0
# --locked`), the Rust tower-mcp gateway, as a peer of the HTTP front: used
# when found (MCP_PROXY=path, or on PATH), skipped otherwise.
mcp_proxy="${MCP_PROXY:-$(command -v mcp-proxy || true)}"
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
# WARDEN: another build of warden to measure (bench/pgo.sh's), against the
# same floors, peers and fixture.
warden="${WARDEN:-$bin/warden}"
# Absolute: the TypeScript client starts it from another directory.
[[ "$warden" == /* ]] || warden="$PWD/$warden"
fixture="$bin/warden-fixture"
for b in "$bench" "$warden" "$fixture"; do
    [[ -x "$b" ]] || die "missing binary $b after build"
done
echo "==> measuring $warden" >&2

# The npm packages, pinned, in bench/node_modules (git-ignored). They are
# installed together: `npm install --no-save` of one removes the other.
node_modules="$root/bench/node_modules"
everything_js="$node_modules/@modelcontextprotocol/server-everything/dist/index.js"
supergateway_js="$node_modules/supergateway/dist/index.js"
# installed_version PACKAGE: its version in bench/node_modules, or nothing.
installed_version() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
        "$node_modules/$1/package.json" 2>/dev/null || true
}
use_supergateway=0
[[ "$SKIP_NODE" != 1 && "$SKIP_HTTP" != 1 ]] && use_supergateway=1
if [[ "$SKIP_NODE" != 1 ]]; then
    command -v node >/dev/null || die "node is not installed (SKIP_NODE=1 skips server-everything and supergateway)"
    missing=0
    [[ "$(installed_version @modelcontextprotocol/server-everything)" == "$EVERYTHING_VERSION" ]] || missing=1
    [[ "$(installed_version @modelcontextprotocol/sdk)" == "$SDK_VERSION" ]] || missing=1
    if [[ "$use_supergateway" == 1 && "$(installed_version supergateway)" != "$SUPERGATEWAY_VERSION" ]]; then
        missing=1
    fi
    if [[ "$missing" == 1 ]]; then
        command -v npm >/dev/null || die "npm is not installed (SKIP_NODE=1 skips server-everything and supergateway)"
        echo "==> installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION and" \
            "supergateway@$SUPERGATEWAY_VERSION into bench/node_modules" >&2
        npm install --no-save --no-audit --no-fund --prefix "$root/bench" \
            "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" "supergateway@$SUPERGATEWAY_VERSION" \
            "@modelcontextprotocol/sdk@$SDK_VERSION" >&2 ||
            die "npm install of server-everything and supergateway failed"
    fi
    [[ -f "$everything_js" ]] || die "server-everything entry point not found at $everything_js"
    [[ "$use_supergateway" != 1 || -f "$supergateway_js" ]] ||
        die "supergateway entry point not found at $supergateway_js"
fi

mkdir -p "$root/bench/.cache"
results="$root/bench/.cache/results-$(date +%Y%m%d-%H%M%S).jsonl"
: >"$results"
tmp="$(mktemp -d)"
# HTTP servers started in the background: stopped at exit, whatever happens.
live_servers=()
cleanup() {
    local pid
    for pid in "${live_servers[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    rm -rf "$tmp"
    [[ -z "${ram_dir:-}" ]] || rm -rf "$ram_dir"
}
trap cleanup EXIT

# Peers' runs that failed (their labels), reported at the end.
failed_peers=()

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
        # A peer that fails (supergateway resets connections under load now
        # and then) costs its own figures, not the run's.
        if [[ $label == */supergateway || $label == */mcp-proxy ]]; then
            echo "run.sh: $label is left out of this round" >&2
            failed_peers+=("$label")
            return 0
        fi
        exit 1
    fi
    cat "$tmp/out.jsonl" >&2
    cat "$tmp/out.jsonl" >>"$results"
}

# stop_server PID: stops a server started below and waits for it.
stop_server() {
    local pid="$1" kept=() p
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for p in "${live_servers[@]}"; do
        [[ "$p" == "$pid" ]] || kept+=("$p")
    done
    live_servers=("${kept[@]}")
}

# start_warden_http CONFIG NAME: starts `warden serve --http` on a free
# loopback port; sets server_pid and server_url (its /mcp endpoint).
start_warden_http() {
    local config="$1" log="$tmp/server-$2.log"
    : >"$log"
    "$warden" serve --config "$config" --http 127.0.0.1:0 >/dev/null 2>"$log" &
    server_pid=$!
    live_servers+=("$server_pid")
    wait_for_url "$log" "warden: listening on" "warden serve --http"
}

# wait_for_url LOG PREFIX NAME: waits until the server just started
# (server_pid) writes `PREFIX http://.../mcp` in LOG, and sets server_url;
# shows LOG and exits if it dies or never does.
wait_for_url() {
    local log="$1" prefix="$2" name="$3" i
    server_url=""
    for ((i = 0; i < 200; i++)); do
        # Ending in /mcp: the whole line, not one still being written.
        server_url="$(sed -n "s|^$prefix \(http://[^ ]*/mcp\)\$|\1|p" "$log" | head -n 1 || true)"
        [[ -n "$server_url" ]] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "run.sh: $name did not start; its log (last 30 lines):" >&2
    tail -n 30 "$log" >&2
    exit 1
}

# start_supergateway NAME: starts supergateway bridging the fixture to
# Streamable HTTP on a free port (it binds every interface; only loopback is
# used); sets server_pid and server_url.
start_supergateway() {
    local log="$tmp/server-$1.log" port
    port="$(free_port)"
    node "$supergateway_js" --stdio "$(printf '%q' "$fixture")" --outputTransport streamableHttp --stateful \
        --port "$port" --logLevel none >"$log" 2>&1 &
    server_pid=$!
    live_servers+=("$server_pid")
    server_url="http://127.0.0.1:$port/mcp"
    wait_for_port "$port" supergateway "$log"
}

# free_port: a free loopback port.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for_port PORT NAME LOG: waits until the server just started
# (server_pid) accepts connections on PORT; shows LOG and exits if it dies
# or never does.
wait_for_port() {
    local port="$1" name="$2" log="$3" i
    for ((i = 0; i < 200; i++)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "run.sh: $name did not start; its log (last 30 lines):" >&2
    tail -n 30 "$log" >&2
    exit 1
}

# The HTTP runs: the fixture behind warden's HTTP front, and behind supergateway.
fixture_config="$tmp/warden-fixture.yaml"
python3 - "$fixture" >"$fixture_config" <<'EOF'
import json, sys
print("servers:")
print(f"  fixture:\n    transport: {{kind: stdio, command: {json.dumps(sys.argv[1])}, args: []}}")
EOF

# http_bench LABEL SESSIONS: one HTTP run against a server started for it.
http_bench() {
    local label="$1" sessions="$2"
    case "$label" in
        */warden) start_warden_http "$fixture_config" "${label//\//_}" ;;
        */supergateway) start_supergateway "${label//\//_}" ;;
        */mcp-proxy) start_mcp_proxy "${label//\//_}" ;;
        */bare) start_bench_server "${label//\//_}" --bridge-bare 127.0.0.1:0 -- "$fixture" ;;
    esac
    local cpu=(--cpu-of "$server_pid") era=()
    # modern/...: MCP 2026-07-28 requests (no session; each served by the lane).
    [[ $label == modern* ]] && era=(--modern)
    bench "$label" "$HTTP_CALLS" --url "$server_url" --sessions "$sessions" "${cpu[@]}" "${era[@]}"
    stop_server "$server_pid"
}

# start_mcp_proxy NAME: joshrotenberg/mcp-proxy (the Rust tower-mcp gateway)
# in front of the fixture; sets server_pid and server_url.
start_mcp_proxy() {
    local log="$tmp/server-$1.log" config="$tmp/mcp-proxy.toml" port
    port="$(free_port)"
    printf '[proxy]\nname = "bench"\nseparator = "__"\n\n[proxy.listen]\nhost = "127.0.0.1"\nport = %s\n\n[observability]\nlog_level = "warn"\n\n[[backends]]\nname = "fixture"\ntransport = "stdio"\ncommand = "%s"\n' \
        "$port" "$fixture" >"$config"
    RUST_LOG=warn "$mcp_proxy" --config "$config" >"$log" 2>&1 &
    server_pid=$!
    live_servers+=("$server_pid")
    server_url="http://127.0.0.1:$port/"
    wait_for_port "$port" mcp-proxy "$log"
}

# ping_bench LABEL: `ping`, which a gateway answers itself, over HTTP:
# ping/warden against warden's HTTP front, ping/bare against a bare hyper
# endpoint (`warden-bench --serve-bare`) answering the same JSON: the floor.
ping_bench() {
    local label="$1"
    if [[ "$label" == */warden ]]; then
        start_warden_http "$fixture_config" "${label//\//_}"
        bench "$label" "$HTTP_CALLS" --ping --url "$server_url" --cpu-of "$server_pid"
    else
        start_bench_server "${label//\//_}" --serve-bare 127.0.0.1:0
        bench "$label" "$HTTP_CALLS" --ping --url "$server_url"
    fi
    stop_server "$server_pid"
}

# start_bench_server NAME ARGS...: starts `warden-bench ARGS` serving HTTP
# (--serve-bare, --forward-bare or --bridge-bare); sets server_pid and
# server_url.
start_bench_server() {
    local log="$tmp/server-$1.log"
    shift
    : >"$log"
    "$bench" "$@" >"$log" 2>&1 &
    server_pid=$!
    live_servers+=("$server_pid")
    wait_for_url "$log" "listening on" "warden-bench $*"
}

# ts_bench LABEL: the official TypeScript SDK client (bench/ts-client.mjs)
# against server-everything, directly (tseverything/direct), through
# `warden wrap` (tseverything/warden) or through a bare relay
# (tseverything/bare, `warden-bench --relay-bare`): a Node client and a
# Node server, as most users run them.
ts_bench() {
    local label="$1" command=(node "$everything_js" stdio)
    case "$label" in
        */warden) command=("$warden" wrap -- "${command[@]}") ;;
        */bare) command=("$bench" --relay-bare -- "${command[@]}") ;;
    esac
    echo "==> $label" >&2
    if ! (cd "$root/bench" && node ts-client.mjs --label "$label" --calls "$NODE_CALLS" \
        --concurrency "$CONCURRENCY" --warmup "$WARMUP" -- "${command[@]}") >"$tmp/out.jsonl" 2>"$tmp/ts.log"; then
        tail -n 30 "$tmp/ts.log" >&2
        die "the TypeScript SDK client failed for $label"
    fi
    cat "$tmp/out.jsonl" >&2
    cat "$tmp/out.jsonl" >>"$results"
}

# Two hops: a second warden's HTTP front is the HTTP upstream of the first.
hop_config="$tmp/warden-hop.yaml"
# write_hop_config URL: a config whose one server is the MCP endpoint at URL.
write_hop_config() {
    printf 'servers:\n  hop:\n    transport: {kind: http, url: "%s"}\n' "$1" >"$hop_config"
}

# hop_bench LABEL: hop/direct calls the second warden itself, hop/warden
# calls it through the first, hop/bare through a bare hyper forwarder
# (`warden-bench --forward-bare`: the least any HTTP hop costs on this
# machine); one session, each with its own servers.
hop_bench() {
    local label="$1" upstream_pid front_pid
    start_warden_http "$fixture_config" "${label//\//_}-upstream"
    upstream_pid="$server_pid"
    if [[ "$label" == */direct ]]; then
        bench "$label" "$HTTP_CALLS" --url "$server_url" --cpu-of "$upstream_pid"
    elif [[ "$label" == */bare ]]; then
        start_bench_server "${label//\//_}" --forward-bare 127.0.0.1:0 --to "$server_url"
        front_pid="$server_pid"
        bench "$label" "$HTTP_CALLS" --url "$server_url" --cpu-of "$front_pid"
        stop_server "$front_pid"
    else
        write_hop_config "$server_url"
        start_warden_http "$hop_config" "${label//\//_}"
        front_pid="$server_pid"
        bench "$label" "$HTTP_CALLS" --url "$server_url" --cpu-of "$front_pid"
        stop_server "$front_pid"
    fi
    stop_server "$upstream_pid"
}

# Whether this build's warden can use an HTTP upstream: the config must
# validate, and a call must go through both hops.
hop_ok=0
hop_reason=""
if [[ "$SKIP_HTTP" != 1 ]]; then
    echo "==> checking that warden can use an HTTP upstream (for the two-hop runs)" >&2
    start_warden_http "$fixture_config" hop-probe-upstream
    probe_upstream="$server_pid"
    write_hop_config "$server_url"
    if ! "$warden" validate --config "$hop_config" >"$tmp/hop-validate.log" 2>&1; then
        hop_reason="warden validate refuses an HTTP upstream: $(tr '\n' ' ' <"$tmp/hop-validate.log")"
    else
        start_warden_http "$hop_config" hop-probe
        if "$bench" --calls 1 --warmup 0 --concurrency 1 --timeout-secs 10 --url "$server_url" \
            >/dev/null 2>"$tmp/hop-probe.log"; then
            hop_ok=1
        else
            hop_reason="a call through two wardens failed: $(tail -n 3 "$tmp/hop-probe.log" | tr '\n' ' ')"
        fi
        stop_server "$server_pid"
    fi
    stop_server "$probe_upstream"
    [[ "$hop_ok" == 1 ]] || echo "run.sh: skipping the two-hop runs: $hop_reason" >&2
fi

# Warden with a realistic 200-rule policy loaded (150 rules for other tools,
# 50 that look at echo's argument and do not match): the guard's cost per
# call, against the same `serve` with no policy written (`policy200/none`).
policy_config="$tmp/warden-policy-200.yaml"
no_policy_config="$tmp/warden-policy-none.yaml"
printf 'servers:\n  fixture:\n    transport: {kind: stdio, command: "%s", args: []}\n' "$fixture" >"$no_policy_config"
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

# The same `serve` with metrics on (counted, served on a loopback port of
# their own), against metrics off (`policy200/none`'s config): what
# counting costs per call.
metrics_config="$tmp/warden-metrics.yaml"
{
    cat "$no_policy_config"
    printf 'metrics: {listen: "127.0.0.1:0", open: true}\n'
} >"$metrics_config"

# The same `serve` exporting a span per request and per forwarded call
# (100% sampled) to a local sink (`warden-bench --serve-bare`, which reads
# each POST and answers 202), against tracing off: what tracing costs.
start_bench_server trace-sink --serve-bare 127.0.0.1:0
trace_sink_pid="$server_pid"
traces_config="$tmp/warden-traces.yaml"
{
    cat "$no_policy_config"
    printf 'tracing: {otlp: "%s", sampleRatio: 1}\n' "${server_url%/mcp}/v1/traces"
} >"$traces_config"

# The audit runs: the log lives on the repository's disk (not in $tmp, which
# may be a tmpfs), and the disk's own durable-append latency is measured there.
audit_dir="$root/bench/.cache/audit"
# `audit/ram`: `fsync: always` with the log in RAM (/dev/shm, where it is a
# tmpfs): the journal's write and sync cost nothing there, so the run shows
# what group commit itself costs (hand-overs, hashing, batching) without a
# disk, beside `audit/always`, which adds this disk's latency.
ram_dir=""
if [[ "$(stat -f -c %T /dev/shm 2>/dev/null)" == tmpfs && -w /dev/shm ]]; then
    ram_dir="$(mktemp -d -p /dev/shm warden-bench.XXXXXX)"
fi
# write_audit_config MODE: a config for the fixture with an audit log
# (MODE: always, never, or ram: always in $ram_dir), or without one (none);
# prints its path.
write_audit_config() {
    local config="$tmp/warden-audit-$1.yaml"
    {
        printf 'servers:\n  fixture:\n    transport: {kind: stdio, command: "%s", args: []}\n' "$fixture"
        case "$1" in
            none) ;;
            ram) printf 'audit: {path: "%s/audit-ram.jsonl", fsync: always}\n' "$ram_dir" ;;
            *) printf 'audit: {path: "%s/audit-%s.jsonl", fsync: %s}\n' "$audit_dir" "$1" "$1" ;;
        esac
    } >"$config"
    echo "$config"
}
# audit_bench LABEL: one audit run (audit/none, audit/always, audit/never,
# audit/ram, audit/disk).
audit_bench() {
    local label="$1" mode="${1#audit/}" dir="$audit_dir"
    mkdir -p "$audit_dir"
    if [[ "$mode" == disk ]]; then
        WARMUP=50 bench "$label" "$DISK_WRITES" --disk-sync-in "$audit_dir"
        return
    fi
    [[ "$mode" == ram ]] && dir="$ram_dir"
    rm -f "$dir/audit-$mode.jsonl"* "$dir/.audit-$mode.jsonl.sync"
    bench "$label" "$AUDIT_CALLS" -- "$warden" serve --config "$(write_audit_config "$mode")"
    if [[ "$mode" != none ]]; then
        "$warden" audit verify "$dir/audit-$mode.jsonl" >&2 || die "the audit log of $label does not verify"
        rm -f "$dir/audit-$mode.jsonl"* "$dir/.audit-$mode.jsonl.sync"
    fi
}

# Short phases on a 2-core machine are noisy: each pair runs REPEAT times,
# alternating which goes first, and the summary takes medians.
for ((round = 1; round <= REPEAT; round++)); do
    echo "==> round $round of $REPEAT" >&2
    if [[ "$SKIP_AUDIT" != 1 ]]; then
        order=(audit/disk audit/none audit/always audit/never)
        [[ -z "$ram_dir" ]] || order+=(audit/ram)
        ((round % 2)) || order=($(printf '%s\n' "${order[@]}" | tac))
        for label in "${order[@]}"; do
            audit_bench "$label"
        done
    fi
    [[ "$AUDIT_ONLY" == 1 ]] && continue
    pair=(fixture/direct fixture/bare fixture/warden)
    ((round % 2)) || pair=(fixture/warden fixture/bare fixture/direct)
    for label in "${pair[@]}"; do
        case "$label" in
            */direct) bench "$label" "$CALLS" -- "$fixture" ;;
            */bare) bench "$label" "$CALLS" -- "$bench" --relay-bare -- "$fixture" ;;
            */warden) bench "$label" "$CALLS" -- "$warden" wrap -- "$fixture" ;;
        esac
    done
    pair=(policy200/direct policy200/none policy200/warden)
    ((round % 2)) || pair=(policy200/warden policy200/none policy200/direct)
    for label in "${pair[@]}"; do
        case "$label" in
            */direct) bench "$label" "$CALLS" -- "$fixture" ;;
            */none) bench "$label" "$CALLS" -- "$warden" serve --config "$no_policy_config" ;;
            */warden) bench "$label" "$CALLS" -- "$warden" serve --config "$policy_config" ;;
        esac
    done
    pair=(metrics/off metrics/on traces/off traces/on)
    ((round % 2)) || pair=(traces/on traces/off metrics/on metrics/off)
    for label in "${pair[@]}"; do
        case "$label" in
            */off) bench "$label" "$CALLS" -- "$warden" serve --config "$no_policy_config" ;;
            metrics/on) bench "$label" "$CALLS" -- "$warden" serve --config "$metrics_config" ;;
            traces/on) bench "$label" "$CALLS" -- "$warden" serve --config "$traces_config" ;;
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
        pair=(tseverything/direct tseverything/bare tseverything/warden)
        ((round % 2)) || pair=(tseverything/warden tseverything/bare tseverything/direct)
        for label in "${pair[@]}"; do
            ts_bench "$label"
        done
    fi
    if [[ "$SKIP_HTTP" != 1 ]]; then
        for sessions in 1 "$CONCURRENCY"; do
            pair=("http$sessions/warden")
            # The bridge serves one session.
            [[ "$sessions" == 1 ]] && pair+=(http1/bare)
            [[ "$use_supergateway" == 1 ]] && pair+=("http$sessions/supergateway")
            [[ -n "$mcp_proxy" ]] && pair+=("http$sessions/mcp-proxy")
            ((round % 2)) || pair=("${pair[@]:1}" "${pair[0]}")
            for label in "${pair[@]}"; do
                http_bench "$label" "$sessions"
            done
        done
        pair=(http1/warden modern/warden)
        ((round % 2)) || pair=(modern/warden http1/warden)
        for label in "${pair[@]}"; do
            http_bench "$label" 1
        done
        pair=(ping/bare ping/warden)
        ((round % 2)) || pair=(ping/warden ping/bare)
        for label in "${pair[@]}"; do
            ping_bench "$label"
        done
        if [[ "$hop_ok" == 1 ]]; then
            pair=(hop/direct hop/bare hop/warden)
            ((round % 2)) || pair=(hop/warden hop/bare hop/direct)
            for label in "${pair[@]}"; do
                hop_bench "$label"
            done
        fi
    fi
done

# Idle memory: the fixture alone, warden wrapping it, warden serving three.
if [[ "$AUDIT_ONLY" != 1 ]]; then
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
fi

echo >&2
# Allocations per forwarded call (heaptrack), unless SKIP_ALLOC=1.
if [[ "${SKIP_ALLOC:-0}" != 1 && "$AUDIT_ONLY" != 1 ]]; then
    if command -v heaptrack >/dev/null; then
        echo "counting allocations per call (bench/allocations.sh)..." >&2
        WARDEN="$warden" "$root/bench/allocations.sh" "$bin" >>"$results" || echo "run.sh: bench/allocations.sh failed" >&2
    else
        echo "run.sh: heaptrack is not installed: allocations per call are not counted" >&2
    fi
fi

# User-space instructions per forwarded call (callgrind), unless SKIP_INSTR=1.
if [[ "${SKIP_INSTR:-0}" != 1 && "$AUDIT_ONLY" != 1 ]]; then
    if command -v valgrind >/dev/null; then
        echo "counting instructions per call (bench/instructions.sh)..." >&2
        WARDEN="$warden" "$root/bench/instructions.sh" "$bin" >>"$results" || echo "run.sh: bench/instructions.sh failed" >&2
    else
        echo "run.sh: valgrind is not installed: instructions per call are not counted" >&2
    fi
fi

stop_server "$trace_sink_pid"

python3 - "$results" "$CALLS" "$NODE_CALLS" "$CONCURRENCY" "$WARMUP" "$HTTP_CALLS" "$SKIP_HTTP" "$hop_ok" \
    "$hop_reason" "$AUDIT_CALLS" <<'EOF'
import json, statistics, sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
grouped = {}
rss = {}
for r in rows:
    upstream, _, mode = r["label"].partition("/")
    if r["phase"] in ("allocations", "instructions"):
        continue  # reported by bench/front.py
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

# Some runs are repeated within a round (http1/warden beside each peer):
# the count shown is the rounds.
n_runs = min((m["runs"] for m in runs.values()), default=0)
calls, node_calls, conc, warmup, http_calls, skip_http, hop_ok, hop_reason, audit_calls = sys.argv[2:11]
print(f"calls per phase: {calls} (server-everything: {node_calls}; HTTP: {http_calls}); "
      f"concurrency: {conc}; warm-up calls: {warmup}")
print(f"Warden vs direct, median of {n_runs} run(s) each (calls/s: higher is better; "
      f"latency in µs; ratio = warden/direct throughput)")
hdr = (f"{'upstream':<11} {'phase':<11} {'conc':>4} {'direct/s':>10} {'warden/s':>10} {'ratio':>6} "
       f"{'p50 dir':>8} {'p50 wdn':>8} {'+p50':>7} {'p99 dir':>8} {'p99 wdn':>8} {'+p99':>7} {'spread':>7}")
print(hdr)
print("-" * len(hdr))
upstreams = []
for (u, _, _) in runs:
    if u not in upstreams and not u.startswith("http") and u not in ("hop", "audit"):
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
# The 200-rule policy against the same `warden serve` with no policy written.
for phase in ("sequential", "concurrent"):
    none = runs.get(("policy200", "none", phase))
    ruled = runs.get(("policy200", "warden", phase))
    if not none or not ruled:
        continue
    ratio = ruled["calls_per_sec"] / none["calls_per_sec"] if none["calls_per_sec"] else float("nan")
    added = ruled["p50_us"] - none["p50_us"]
    if phase == "sequential":
        print(f"target: policy200, sequential, added p50 vs no policy <= 5 µs: {added:+.1f} µs "
              f"({ruled['p50_us']:.1f} vs {none['p50_us']:.1f}; calls/s {ratio:.2f}x): "
              f"{'met' if added <= 5 else 'NOT met'}")
    else:
        print(f"target: policy200, {ruled['concurrency']} in flight, calls/s vs no policy >= 0.85x: "
              f"{ruled['calls_per_sec']:.0f} vs {none['calls_per_sec']:.0f} = {ratio:.2f}x: "
              f"{'met' if ratio >= 0.85 else 'NOT met'}")

# Metrics on against the same `warden serve` with metrics off.
for phase in ("sequential", "concurrent"):
    off = runs.get(("metrics", "off", phase))
    on = runs.get(("metrics", "on", phase))
    if not off or not on:
        continue
    ratio = on["calls_per_sec"] / off["calls_per_sec"] if off["calls_per_sec"] else float("nan")
    spread_pct = max(on["spread"], off["spread"])
    if phase == "sequential":
        print(f"metrics on, sequential: added p50 {on['p50_us'] - off['p50_us']:+.1f} µs "
              f"({on['p50_us']:.1f} vs {off['p50_us']:.1f}), calls/s {ratio:.3f}x (spread ±{spread_pct:.0f}%)")
    else:
        print(f"target: metrics on, {on['concurrency']} in flight, calls/s vs off >= 0.97x: "
              f"{on['calls_per_sec']:.0f} vs {off['calls_per_sec']:.0f} = {ratio:.3f}x (spread ±{spread_pct:.0f}%): "
              f"{'met' if ratio >= 0.97 else 'NOT met'}")

# Tracing at 100% to a local sink against the same serve without it.
for phase in ("sequential", "concurrent"):
    off = runs.get(("traces", "off", phase))
    on = runs.get(("traces", "on", phase))
    if not off or not on:
        continue
    ratio = on["calls_per_sec"] / off["calls_per_sec"] if off["calls_per_sec"] else float("nan")
    spread_pct = max(on["spread"], off["spread"])
    print(f"target: traces at 100%, {on['concurrency']} in flight, calls/s vs off >= 0.85x: "
          f"{on['calls_per_sec']:.0f} vs {off['calls_per_sec']:.0f} = {ratio:.3f}x, p50 {on['p50_us']:.1f} vs "
          f"{off['p50_us']:.1f} µs (spread ±{spread_pct:.0f}%): {'met' if ratio >= 0.85 else 'NOT met'}")

def spread(*ms):
    return "±%.0f%%" % max(m["spread"] for m in ms)

http_sets = sorted({u for (u, _, _) in runs if u.startswith("http")}, key=lambda u: int(u[4:] or 0))
if http_sets:
    print()
    print(f"HTTP front, median of {n_runs} run(s): warden serve --http vs supergateway --stateful, "
          "the fixture behind both over stdio (ratio = warden/supergateway calls/s)")
    hdr = (f"{'sessions':>8} {'phase':<11} {'conc':>4} {'warden/s':>10} {'supgw/s':>9} {'ratio':>6} "
           f"{'p50 wdn':>8} {'p50 sg':>9} {'p99 wdn':>8} {'p99 sg':>9} {'spread':>7}")
    print(hdr)
    print("-" * len(hdr))
    for u in http_sets:
        for phase in ("sequential", "concurrent"):
            w = runs.get((u, "warden", phase))
            g = runs.get((u, "supergateway", phase))
            if not w:
                continue
            sessions = u[4:]
            if g:
                ratio = w["calls_per_sec"] / g["calls_per_sec"] if g["calls_per_sec"] else float("nan")
                print(f"{sessions:>8} {phase:<11} {w['concurrency']:>4} {w['calls_per_sec']:>10.0f} "
                      f"{g['calls_per_sec']:>9.0f} {ratio:>6.1f} {w['p50_us']:>8.1f} {g['p50_us']:>9.1f} "
                      f"{w['p99_us']:>8.1f} {g['p99_us']:>9.1f} {spread(w, g):>7}")
            else:
                print(f"{sessions:>8} {phase:<11} {w['concurrency']:>4} {w['calls_per_sec']:>10.0f} "
                      f"{'-':>9} {'-':>6} {w['p50_us']:>8.1f} {'-':>9} {w['p99_us']:>8.1f} {'-':>9} "
                      f"{spread(w):>7}")
    compared = [(u, phase, runs[(u, "warden", phase)], runs[(u, "supergateway", phase)])
                for u in http_sets for phase in ("sequential", "concurrent")
                if (u, "warden", phase) in runs and (u, "supergateway", phase) in runs]
    if compared:
        print("targets: warden at least 2x supergateway's calls/s, at an equal or better p50:")
    else:
        print("supergateway: not measured (SKIP_NODE=1)")
    for u, phase, w, g in compared:
        ratio = w["calls_per_sec"] / g["calls_per_sec"] if g["calls_per_sec"] else float("nan")
        ok = ratio >= 2 and w["p50_us"] <= g["p50_us"]
        print(f"  {u[4:]} session(s), {phase}: {ratio:.1f}x, p50 "
              f"{w['p50_us']:.1f} vs {g['p50_us']:.1f} µs: {'met' if ok else 'NOT met'}")

    print()
    print(f"Warden over HTTP vs the fixture directly over stdio, median of {n_runs} run(s)")
    hdr = (f"{'sessions':>8} {'phase':<11} {'conc':>4} {'stdio/s':>10} {'http/s':>10} {'ratio':>6} "
           f"{'p50 stdio':>9} {'p50 http':>9} {'+p50':>7} {'spread':>7}")
    print(hdr)
    print("-" * len(hdr))
    for u in http_sets:
        for phase in ("sequential", "concurrent"):
            d = runs.get(("fixture", "direct", phase))
            w = runs.get((u, "warden", phase))
            if not d or not w:
                continue
            ratio = w["calls_per_sec"] / d["calls_per_sec"] if d["calls_per_sec"] else float("nan")
            print(f"{u[4:]:>8} {phase:<11} {w['concurrency']:>4} {d['calls_per_sec']:>10.0f} "
                  f"{w['calls_per_sec']:>10.0f} {ratio:>6.2f} {d['p50_us']:>9.1f} {w['p50_us']:>9.1f} "
                  f"{w['p50_us'] - d['p50_us']:>+7.1f} {spread(d, w):>7}")

if skip_http != "1":
    print()
    if hop_ok != "1":
        print(f"Two hops: not measured ({hop_reason})")
    else:
        print(f"Two hops, median of {n_runs} run(s): client -> warden (HTTP) -> warden (HTTP) -> fixture, "
              "vs client -> the second warden directly")
        hdr = (f"{'phase':<11} {'conc':>4} {'direct/s':>10} {'2-hop/s':>10} {'ratio':>6} {'p50 dir':>8} "
               f"{'p50 2hop':>8} {'+p50':>7} {'+p99':>7} {'+mean':>7} {'spread':>7}")
        print(hdr)
        print("-" * len(hdr))
        for via in ("warden", "bare"):
            for phase in ("sequential", "concurrent"):
                d = runs.get(("hop", "direct", phase))
                w = runs.get(("hop", via, phase))
                if not d or not w:
                    continue
                ratio = w["calls_per_sec"] / d["calls_per_sec"] if d["calls_per_sec"] else float("nan")
                # Mean time per call from throughput (for the sequential phase, the mean latency).
                added_mean = 1e6 / w["calls_per_sec"] - 1e6 / d["calls_per_sec"]
                name = phase if via == "warden" else f"{phase[:4]}, bare"
                print(f"{name:<11} {d['concurrency']:>4} {d['calls_per_sec']:>10.0f} {w['calls_per_sec']:>10.0f} "
                      f"{ratio:>6.2f} {d['p50_us']:>8.1f} {w['p50_us']:>8.1f} {w['p50_us'] - d['p50_us']:>+7.1f} "
                      f"{w['p99_us'] - d['p99_us']:>+7.1f} {added_mean:>+7.1f} {spread(d, w):>7}")
        print("bare: the same hop through a bare hyper forwarder (warden-bench --forward-bare), the floor.")
        d = runs.get(("hop", "direct", "sequential"))
        w = runs.get(("hop", "warden", "sequential"))
        if d and w:
            added = w["p50_us"] - d["p50_us"]
            print(f"added per call (sequential p50): {added:+.1f} µs (its target, against the bare "
                  "forwarder's, is with the core's targets below)")
        print("+mean: 1/calls-per-second, two hops minus direct (for the sequential phase: the added mean latency).")
audit_none = runs.get(("audit", "none", "sequential"))
if audit_none:
    print()
    print(f"The audit log, median of {n_runs} run(s) of {audit_calls} calls: warden serve with the fixture, "
          "without an audit log and with one (ratio = calls/s against no audit)")
    disk = runs.get(("audit", "disk", "disk_sync"))
    if disk:
        print(f"the disk's own write + fdatasync of one {330}-byte line, same directory, same rounds, "
              f"a CPU kept busy: p50 {disk['p50_us']:.1f} µs, p99 {disk['p99_us']:.1f} µs ({spread(disk)})")
    idle = runs.get(("audit", "disk", "disk_sync_idle"))
    if idle:
        print(f"  (the same with the CPUs idle: p50 {idle['p50_us']:.1f} µs, p99 {idle['p99_us']:.1f} µs; on a VM "
              "an idle CPU can notice the sync's completion only at its next timer tick)")
    hdr = (f"{'audit':<14} {'phase':<11} {'conc':>4} {'calls/s':>10} {'ratio':>6} {'p50':>9} {'+p50':>9} "
           f"{'p99':>9} {'+p50/disk':>9} {'spread':>7}")
    print(hdr)
    print("-" * len(hdr))
    for mode, name in (("none", "none"), ("always", "fsync always"), ("never", "fsync never"),
                       ("ram", "always, RAM")):
        for phase in ("sequential", "concurrent"):
            m = runs.get(("audit", mode, phase))
            base = runs.get(("audit", "none", phase))
            if not m or not base:
                continue
            ratio = m["calls_per_sec"] / base["calls_per_sec"] if base["calls_per_sec"] else float("nan")
            added = m["p50_us"] - base["p50_us"]
            per_disk = f"{added / disk['p50_us']:.2f}" if disk and disk["p50_us"] else "-"
            print(f"{name:<14} {phase:<11} {m['concurrency']:>4} {m['calls_per_sec']:>10.0f} {ratio:>6.2f} "
                  f"{m['p50_us']:>9.1f} {added:>+9.1f} {m['p99_us']:>9.1f} {per_disk:>9} {spread(m, base):>7}")
    seq = runs.get(("audit", "always", "sequential"))
    conc_run = runs.get(("audit", "always", "concurrent"))
    conc_none = runs.get(("audit", "none", "concurrent"))
    if seq and disk:
        added = seq["p50_us"] - audit_none["p50_us"]
        print(f"target: sequential added p50 with fsync always <= 1.2x the disk's write + fdatasync p50: "
              f"{added:+.1f} µs vs {disk['p50_us']:.1f} µs = {added / disk['p50_us']:.2f}x: "
              f"{'met' if added <= 1.2 * disk['p50_us'] else 'NOT met'}")
    if conc_run and conc_none:
        ratio = conc_run["calls_per_sec"] / conc_none["calls_per_sec"]
        print(f"target: {conc} in flight, fsync always >= 0.5x the calls/s without audit: {ratio:.2f}x: "
              f"{'met' if ratio >= 0.5 else 'NOT met'}")
    ram = runs.get(("audit", "ram", "concurrent"))
    if ram and conc_none:
        print(f"  the same with the log in RAM (group commit without a disk): "
              f"{ram['calls_per_sec'] / conc_none['calls_per_sec']:.2f}x")

print()
names = {
    "fixture": "fixture server alone",
    "warden-wrap": "warden wrap (1 fixture backend)",
    "warden-serve-3": "warden serve (3 fixture backends)",
}
if rss:
    print("Idle memory (VmRSS of the process itself, backends not included):")
for key, desc in names.items():
    r = rss.get(key)
    if r:
        print(f"  {desc:<36} {r['rss_mb']:>7.1f} MB ({r['rss_kb']} kB)")
EOF
python3 "$root/bench/front.py" "$results"
if [[ "$AUDIT_ONLY" != 1 ]]; then
    echo >&2
    echo "Policy decision time, in process (targets: 200 rules p50 <= 1 µs, p99 <= 3 µs; 2,000 rules p50 <= 1.5 µs):"
    (cd "$root" && cargo run --quiet --release -p warden-policy --example decide_bench guard)
    echo "IronCurtain's imported policy, its 321 scenarios' calls (target: p50 <= 2 µs):"
    (cd "$root" && cargo run --quiet --release -p warden-import --example ironcurtain_bench)
    echo "A scrape of /metrics, rendered in process (target: under 5 ms):"
    (cd "$root" && cargo run --quiet --release -p warden-metrics --example scrape_bench)
fi
echo >&2
echo "raw results: $results" >&2
if ((${#failed_peers[@]})); then
    echo "peers' runs that failed and are left out: ${failed_peers[*]}" >&2
fi
