#!/usr/bin/env bash
# Installs the Debian packages the tests drive for real: bubblewrap (the
# per-server sandbox) and Chromium (the approval page is checked in a real
# headless browser), and openssl (the tests make TLS certificates with it).
# bubblewrap is pinned exactly; Chromium and openssl to their major
# version, because Debian's security archive replaces its builds within a
# major release and keeps only the newest. Does nothing when all three are there.
set -euo pipefail
want=(bubblewrap=0.8.0-2+deb12u1 'chromium=156.*' 'openssl=3.0.*')
if command -v bwrap >/dev/null && command -v chromium >/dev/null && command -v openssl >/dev/null; then
    echo "system packages: already installed ($(bwrap --version), $(chromium --version 2>/dev/null | head -n1))"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
echo "system packages: installed ($(bwrap --version), $(chromium --version 2>/dev/null | head -n1))"
