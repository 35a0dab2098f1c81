#!/usr/bin/env bash
# Installs the Debian packages the tests drive for real: bubblewrap (the
# per-server sandbox), Chromium (the approval page is checked in a real
# headless browser, through the DevTools protocol, which is stable across
# versions), openssl (the tests make TLS certificates with it) and postgresql
# (sql-approval in front of the real server-postgres and a real database:
# crates/warden/tests/presets.rs starts a throwaway cluster, as the postgres
# user when run as root) and prometheus (crates/warden/tests/metrics.rs has a
# real Prometheus scrape Warden and answers PromQL queries).
#
# No exact version is pinned: Debian's security archive keeps only the newest
# build of a package (Chromium's major version moves about every four weeks,
# and a point release replaces bubblewrap's), so a pinned version fails on the
# first fresh machine after the archive moves on, with no change of ours.
# Instead this installs what the archive has, checks the oldest version the
# tests are known to need, and prints what it got. Does nothing when all five
# are there.
set -euo pipefail

print_versions() {
    echo "system packages: $1 ($(bwrap --version), $(chromium --version 2>/dev/null | head -n1), $(openssl version), $("$(initdb_path)" --version), $(prometheus --version 2>&1 | head -n1))"
}

# The newest installed PostgreSQL server's initdb (not on PATH in Debian).
initdb_path() {
    ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n1
}

if ! { command -v bwrap && command -v chromium && command -v openssl && command -v prometheus && [[ -n $(initdb_path) ]]; } >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends bubblewrap chromium openssl postgresql prometheus >/dev/null
    installed=installed
else
    installed="already installed"
fi

# The oldest versions the sandbox and page tests were written against.
at_least() { # name have want
    if [[ "$(printf '%s\n%s\n' "$3" "$2" | sort -V | head -n1)" != "$3" ]]; then
        echo "system packages: $1 $2 is older than the $3 the tests need" >&2
        exit 1
    fi
}
at_least bubblewrap "$(bwrap --version | awk '{print $2}')" 0.8.0
at_least chromium "$(chromium --version 2>/dev/null | awk '{print $2}')" 120
at_least postgresql "$("$(initdb_path)" --version | awk '{print $3}')" 13
at_least prometheus "$(prometheus --version 2>&1 | awk 'NR == 1 {print $3}')" 2.40
print_versions "$installed"
