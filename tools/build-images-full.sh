#!/usr/bin/env bash
# The FULL multi-stage build of both images, Rust stage included, as an operator's
# `docker build` would run it, with podman on this machine (no registry reachable):
#   - debian:bookworm-slim: the debootstrap stand-in of tools/install-containers.sh;
#   - rust:1-bookworm: a stand-in made from that rootfs plus gcc/libc6-dev (apt) and this
#     machine's Rust toolchain (~/.cargo/bin and the default ~/.rustup toolchain) at the real
#     image's paths (CARGO_HOME=/usr/local/cargo, RUSTUP_HOME=/usr/local/rustup), plus the
#     machine's extra CA certificates (its HTTPS egress to crates.io is intercepted);
#   - then `podman build -f deploy/Dockerfile.{worker,coordinator} .` unchanged, with
#     --network host so cargo reaches crates.io and apt-get the Debian mirror.
# Slow (a release build of the workspace on this machine's cores); not in CI. Prints the time
# of each step; the images are tagged matchfarm/worker:full and matchfarm/coordinator:full.
#   MATCHFARM_CI_CACHE  cache folder (default /var/cache/matchfarm-ci)
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${MATCHFARM_CI_CACHE:-/var/cache/matchfarm-ci}
rust_image=docker.io/library/rust:1-bookworm
podman=(podman --runtime /usr/sbin/runc)
t0=$(date +%s)
step() { echo "[$(($(date +%s) - t0)) s] $*"; }

bash tools/install-containers.sh

# The toolchain image (slow to make: ~1.4 GB copied in), then rust:1-bookworm on top of it
# with this machine's extra CA certificates (its HTTPS egress is intercepted; the host's cargo
# trusts those CAs, the image must too, or cargo cannot reach crates.io).
toolchain_image=localhost/matchfarm-ci/rust-toolchain:latest
if ! "${podman[@]}" image exists "$toolchain_image"; then
    step "building the toolchain image $toolchain_image"
    ctx=$(mktemp -d "$cache/rust-standin.XXXXXX")
    trap 'rm -rf "$ctx"' EXIT
    toolchain=$(rustup default | awk '{print $1}')
    rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
    cargo_home=${CARGO_HOME:-$HOME/.cargo}
    mkdir -p "$ctx/cargo" "$ctx/rustup/toolchains"
    # Hard links where the cache is on the same filesystem (cheap), copies otherwise.
    cp -al "$cargo_home/bin" "$ctx/cargo/bin" 2>/dev/null || cp -a "$cargo_home/bin" "$ctx/cargo/bin"
    cp -al "$rustup_home/toolchains/$toolchain" "$ctx/rustup/toolchains/" 2>/dev/null \
        || cp -a "$rustup_home/toolchains/$toolchain" "$ctx/rustup/toolchains/"
    printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\n\n[overrides]\n' \
        "$toolchain" > "$ctx/rustup/settings.toml"
    cat > "$ctx/Containerfile" <<'EOF2'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev pkg-config ca-certificates git \
    && rm -rf /var/lib/apt/lists/*
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY rustup /usr/local/rustup
COPY cargo /usr/local/cargo
RUN cargo --version && rustc --version
EOF2
    "${podman[@]}" build -q --network host -t "$toolchain_image" "$ctx" >/dev/null
    rm -rf "$ctx"
    trap - EXIT
fi
step "building the $rust_image stand-in (toolchain image + this machine's CA certificates)"
ctx=$(mktemp -d "$cache/rust-ca.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/ca"
cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
printf 'FROM %s\nCOPY ca/ /usr/local/share/ca-certificates/\nRUN update-ca-certificates >/dev/null 2>&1\n' \
    "$toolchain_image" > "$ctx/Containerfile"
"${podman[@]}" build -q --network host -t "$rust_image" "$ctx" >/dev/null
rm -rf "$ctx"
trap - EXIT
step "stand-in ready: $("${podman[@]}" run --rm --network host "$rust_image" rustc --version)"

for what in worker coordinator; do
    step "building matchfarm/$what:full (deploy/Dockerfile.$what, unchanged)"
    start=$(date +%s)
    "${podman[@]}" build --network host \
        --ignorefile "deploy/Dockerfile.$what.dockerignore" \
        -f "deploy/Dockerfile.$what" -t "matchfarm/$what:full" . \
        > "$cache/build-full-$what.log" 2>&1 \
        || { tail -n 40 "$cache/build-full-$what.log" >&2; step "FAILED: $what"; exit 1; }
    step "built matchfarm/$what:full in $(($(date +%s) - start)) s (log: $cache/build-full-$what.log)"
done

step "smoke: farm --version in both images"
"${podman[@]}" run --rm --network host --entrypoint /usr/local/bin/farm matchfarm/worker:full --version
"${podman[@]}" run --rm --network host --entrypoint /usr/local/bin/farm matchfarm/coordinator:full --version
"${podman[@]}" run --rm --network host matchfarm/worker:full --help | head -n 3
step "done"
