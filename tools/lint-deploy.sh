#!/usr/bin/env bash
# Static checks of deploy/: hadolint (both Dockerfiles), yamllint (every YAML file there) and
# kubernetes-validate --strict (every core object in deploy/k8s against the bundled API
# schemas; only the known CRDs -- KEDA's, the Prometheus operator's -- may lack a schema).
# Installs the linters first (tools/install-lint.sh, idempotent). Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(bash tools/install-lint.sh)
fail=0

"$bin/hadolint" --config deploy/.hadolint.yaml deploy/Dockerfile.worker deploy/Dockerfile.coordinator \
    || { echo "lint: hadolint failed" >&2; fail=1; }

"$bin/yamllint" --config-file deploy/.yamllint --strict deploy \
    || { echo "lint: yamllint failed" >&2; fail=1; }

# CRDs with no schema in kubernetes-validate (allowed to be skipped), as "apiVersion Kind".
crds='keda.sh/v1alpha1 TriggerAuthentication
keda.sh/v1alpha1 ScaledObject
monitoring.coreos.com/v1 PodMonitor
monitoring.coreos.com/v1 ServiceMonitor'
out=$("$bin/kubernetes-validate" --strict --quiet deploy/k8s/*.yaml 2>&1) \
    || { printf '%s\n' "$out" >&2; echo "lint: kubernetes-validate failed" >&2; fail=1; }
while IFS= read -r line; do
    [ -n "$line" ] || continue
    if [[ $line =~ "Couldn't find schema for kind "([A-Za-z]+)" with api version "([^ ]+) ]]; then
        if ! grep -qxF "${BASH_REMATCH[2]} ${BASH_REMATCH[1]}" <<<"$crds"; then
            echo "lint: no schema for ${BASH_REMATCH[2]} ${BASH_REMATCH[1]} (a typo in apiVersion/kind?): $line" >&2
            fail=1
        fi
    elif [[ $line == WARN* ]]; then
        echo "lint: $line" >&2
        fail=1
    fi
done <<<"$out"

if [ "$fail" = 0 ]; then
    echo "lint-deploy: hadolint, yamllint and kubernetes-validate passed"
fi
exit "$fail"
