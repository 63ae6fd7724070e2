#!/usr/bin/env bash
# The dependency checks of deny.toml on Cargo.lock (issue 22): licences, bans (duplicate
# versions are warnings), sources (crates.io only), then advisories.
#
# The advisories check needs the RustSec advisory database, a git repository on GitHub. This
# project's machines reach only the package registries (crates.io, PyPI, Debian, npm), and
# none of them ships that database, so: fetch it where the network allows; else use a copy
# already in $CARGO_HOME/advisory-dbs (put there by an operator, `cargo deny fetch db` on a
# connected machine); else say plainly that advisories were not checked. Every other check
# must pass either way.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo deny --log-level error check --hide-inclusion-graph licenses bans sources

dbs="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs"
if cargo deny --log-level off fetch db >/dev/null 2>&1; then
    cargo deny --log-level error check --hide-inclusion-graph advisories
elif compgen -G "$dbs/advisory-db-*/.git" >/dev/null || compgen -G "$dbs/advisory-db-*/crates" >/dev/null; then
    echo "cargo deny: the RustSec database could not be fetched; checking against the copy in $dbs"
    cargo deny --log-level error --offline check --hide-inclusion-graph advisories
else
    echo "cargo deny: advisories NOT checked: no RustSec advisory database in $dbs and none can be"
    echo "  fetched from here (github.com/rustsec/advisory-db is not reachable; no registry ships it)."
fi
