#!/usr/bin/env bash
# Installs the Prometheus server (Debian package `prometheus`) for the metrics test
# (coordinator/tests/metrics_prometheus.rs), which starts its own instance on a free port.
# Idempotent. The package's own service is stopped and disabled: tests never use it.
set -euo pipefail
if ! command -v prometheus >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    # Keep the package's postinst from starting the service where policy-rc.d is honoured.
    created_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        created_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    if [ "$created_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
fi
# Stop and disable whatever the package may have started (systemd or not).
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus prometheus-node-exporter >/dev/null 2>&1 || true
fi
if command -v service >/dev/null 2>&1; then
    service prometheus stop >/dev/null 2>&1 || true
    service prometheus-node-exporter stop >/dev/null 2>&1 || true
fi
prometheus --version 2>&1 | head -1
