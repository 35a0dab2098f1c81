#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (niced), then prints per
# target the executions, executions per second and findings. Exits non-zero
# when any target crashed, hung or ran out of memory (the input is kept in
# fuzz/artifacts/<target>/; reproduce with
#   fuzz/target/x86_64-unknown-linux-gnu/release/<target> <file>).
#
#   fuzz/run.sh 30                       # CI smoke run: 30 s per target
#   FUZZ_TARGETS="sql_analyze url_host" fuzz/run.sh 600
#   FUZZ_SANITIZER=none fuzz/run.sh 10  # CI: no AddressSanitizer, a far
#                                        # cheaper build (Warden's code is safe
#                                        # Rust: a panic is what it finds)
#   FUZZ_SEED=1 fuzz/run.sh 10           # the same mutations every run
#   FUZZ_SEED=1 FUZZ_RUNS=200000 fuzz/run.sh
#                                        # CI: a count of executions instead
#                                        # of seconds, from the committed seeds
#                                        # alone (a fresh corpus): as much
#                                        # fuzzing on a slow machine as on a
#                                        # fast one, whatever ran before (a
#                                        # smoke test, not a lottery; not bit
#                                        # for bit the same inputs either:
#                                        # the targets' hash maps are seeded
#                                        # at random, which moves coverage)
#
# Needs the nightly toolchain; installs cargo-fuzz (pinned) when missing.
# Inputs that find new coverage go to fuzz/corpus/<target>/ (not committed);
# the committed seeds in fuzz/seeds/<target>/ are read too.
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
# How long each target runs: FUZZ_RUNS executions, or SECONDS.
if [ -n "${FUZZ_RUNS:-}" ]; then
    case $FUZZ_RUNS in *[!0-9]*) echo "FUZZ_RUNS must be a whole number" >&2; exit 2 ;; esac
    limit=(-runs="$FUZZ_RUNS")
else
    seconds=${1:?usage: fuzz/run.sh SECONDS (or FUZZ_RUNS=N fuzz/run.sh)}
    case $seconds in '' | *[!0-9]*) echo "SECONDS must be a whole number" >&2; exit 2 ;; esac
    limit=(-max_total_time="$seconds")
fi

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
    cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

started=$(date +%s)
nice -n 19 cargo +nightly fuzz build --sanitizer "${FUZZ_SANITIZER:-address}"
built=$(date +%s)

bin_dir="$here/target/$(rustc -vV | sed -n 's/^host: //p')/release"
targets=${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}
failed=0
rows=()
for target in $targets; do
    corpus="$here/corpus/$target"
    # Counted runs start from the seeds alone: a grown corpus would change
    # which inputs they try.
    if [ -n "${FUZZ_RUNS:-}" ]; then
        corpus="$(mktemp -d)"
    fi
    artifacts="$here/artifacts/$target"
    log="$here/artifacts/$target.log"
    mkdir -p "$corpus" "$artifacts" "$here/seeds/$target"
    status=0
    nice -n 19 "$bin_dir/$target" "$corpus" "$here/seeds/$target" \
        "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -seed="${FUZZ_SEED:-0}" \
        -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
    if [ -n "${FUZZ_RUNS:-}" ]; then
        rm -rf "$corpus"
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    found=$(grep -cE '^==[0-9]+== ERROR: libFuzzer|^SUMMARY: (libFuzzer|AddressSanitizer)|panicked at' "$log" || true)
    verdict=ok
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        verdict="FOUND ($(ls "$artifacts" | tr '\n' ' '); see $log)"
        failed=1
    fi
    rows+=("$(printf '%-16s %12s %9s  %s' "$target" "${execs:-?}" "${rate:-?}" "$verdict")")
    echo "${rows[-1]}"
done

echo
printf '%-16s %12s %9s  %s\n' target executions exec/s findings
printf '%s\n' "${rows[@]}"
echo "build $((built - started)) s, fuzzing $(($(date +%s) - built)) s"
exit $failed
