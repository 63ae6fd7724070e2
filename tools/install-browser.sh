#!/usr/bin/env bash
# Installs what the HTML viewer's browser test needs: Debian's chromium (+ chromium-driver)
# and the pinned node packages of tests/browser. Idempotent; prints nothing on success.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

fail() {
    echo "install-browser: $1" >&2
    cat "$log" >&2
    exit 1
}

if [ ! -x /usr/bin/chromium ]; then
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update >"$log" 2>&1 || fail "apt-get update failed"
    "${sudo_cmd[@]}" apt-get install -y --no-install-recommends chromium chromium-driver >>"$log" 2>&1 \
        || fail "apt-get install chromium chromium-driver failed"
    [ -x /usr/bin/chromium ] || fail "/usr/bin/chromium still missing after apt-get install"
fi

command -v node >/dev/null 2>&1 || fail "node not found (node 20 or newer with npm is required)"
command -v npm >/dev/null 2>&1 || fail "npm not found (node 20 or newer with npm is required)"

cd "$root/tests/browser"
# npm ci wipes and reinstalls node_modules; skip it when the installed playwright-core already
# is the version the lock file pins.
want="$(node -p 'require("./package-lock.json").packages["node_modules/playwright-core"].version')"
have="$(node -p 'try { require("./node_modules/playwright-core/package.json").version } catch { "" }')"
if [ "$want" != "$have" ]; then
    npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1 || fail "npm ci in tests/browser failed"
fi
