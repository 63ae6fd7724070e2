#!/usr/bin/env bash
# Installs cargo-deny (the dependency checks of deny.toml, run by tools/cargo-deny.sh) from
# crates.io into ~/.cargo/bin. Debian has no package of it. Idempotent: nothing is done when
# this version is installed. Building it takes several minutes, at low priority.
set -euo pipefail
VERSION=0.20.2
if cargo deny --version 2>/dev/null | grep -qx "cargo-deny $VERSION"; then
    cargo deny --version
    exit 0
fi
nice -n 19 cargo install cargo-deny --locked --version "$VERSION" --quiet
cargo deny --version
