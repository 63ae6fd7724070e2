#!/usr/bin/env bash
# Makes this machine able to build and run the deploy/ images with podman (no Docker engine,
# no registry reachable; see ../shared/CONTAINERS-NOTES.md beside the checkout), for coordinator/tests/containers.rs:
#   1. apt-get install podman runc debootstrap (if missing);
#   2. /etc/containers/containers.conf: default_ulimits = [] (podman's defaults are refused here);
#   3. a stand-in for debian:bookworm-slim: a debootstrap minbase bookworm rootfs from the
#      machine's own Debian mirror, its apt lists deleted (as in the real slim image), imported as
#      docker.io/library/debian:bookworm-slim. The rootfs tarball is cached in $cache, the image is
#      only built when podman does not have it.
# Idempotent and quiet; prints one line saying what it did.
#   MATCHFARM_CI_CACHE  cache folder (default /var/cache/matchfarm-ci)
set -euo pipefail

cache=${MATCHFARM_CI_CACHE:-/var/cache/matchfarm-ci}
image=docker.io/library/debian:bookworm-slim
did=()

need=()
for cmd in podman:podman runc:runc debootstrap:debootstrap; do
    command -v "${cmd%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${cmd%%:*}" ] || need+=("${cmd##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
    did+=("installed ${need[*]}")
fi

# podman's default ulimits (RLIMIT_NOFILE etc.) are refused on this kind of host.
conf=/etc/containers/containers.conf
mkdir -p /etc/containers
if ! grep -Eq '^[[:space:]]*default_ulimits[[:space:]]*=[[:space:]]*\[[[:space:]]*\]' "$conf" 2>/dev/null; then
    if grep -Eq '^[[:space:]]*default_ulimits' "$conf" 2>/dev/null; then
        sed -i -E 's/^[[:space:]]*default_ulimits[[:space:]]*=.*/default_ulimits = []/' "$conf"
    elif grep -Eq '^\[containers\]' "$conf" 2>/dev/null; then
        sed -i -E '0,/^\[containers\]/s//[containers]\ndefault_ulimits = []/' "$conf"
    else
        printf '\n[containers]\ndefault_ulimits = []\n' >> "$conf"
    fi
    did+=("set default_ulimits = [] in $conf")
fi

# The Debian mirror this machine's apt uses (deb822 URIs: or a one-line deb entry).
mirror() {
    local m
    m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '{print $2}' | grep -v security | head -n1 || true)
    if [ -z "$m" ]; then
        m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' \
            | grep -v security | head -n1 || true)
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

if ! podman image exists "$image"; then
    tarball="$cache/bookworm-minbase.tar"
    if [ ! -s "$tarball" ]; then
        mkdir -p "$cache"
        root=$(mktemp -d "$cache/rootfs.XXXXXX")
        trap 'rm -rf "$root"' EXIT
        debootstrap --variant=minbase bookworm "$root" "$(mirror)" >"$cache/debootstrap.log" 2>&1 \
            || { tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
        # As in the real slim image: no package lists, no downloaded .debs.
        rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
        mkdir -p "$root/var/lib/apt/lists/partial"
        tar -C "$root" --numeric-owner -cf "$tarball.part" .
        mv "$tarball.part" "$tarball"
        rm -rf "$root"
        trap - EXIT
        did+=("built $tarball")
    fi
    podman import -q "$tarball" "$image" >/dev/null
    did+=("imported $image")
fi

if [ ${#did[@]} -eq 0 ]; then
    echo "containers: ready (podman $(podman --version | awk '{print $3}'), $image present)"
else
    (IFS=';'; echo "containers: ${did[*]}" | sed 's/;/; /g')
fi
