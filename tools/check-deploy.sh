#!/usr/bin/env bash
# The ops checks of issue 6 in one go: install Prometheus (idempotent), then the dashboard and
# deploy-file checks against the binaries and the live check of every dashboard query against
# a real Prometheus scraping a real `farm run`. Same tests as in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-prometheus.sh
cargo test -p coordinator --test metrics_dashboards --test metrics_deploy --test metrics_prometheus -- --nocapture
