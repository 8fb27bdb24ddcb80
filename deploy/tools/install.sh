#!/usr/bin/env bash
# Installs the tools that render and validate deploy/ offline:
#   kustomize (from the Go module proxy) and kubernetes-validate (from PyPI,
#   which bundles the Kubernetes JSON schemas, so validation needs no network).
# Idempotent: a tool already present at the pinned version is left alone.
# Prints the tool directory on the last line; exits non-zero if anything is missing.
set -euo pipefail

KUSTOMIZE_VERSION="v5.8.1"
KUBERNETES_VALIDATE_VERSION="1.37.0"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS_DIR="${DEPLOY_TOOLS_DIR:-$ROOT/.tmp/tools}"
BIN="$TOOLS_DIR/bin"
mkdir -p "$BIN"

fail() {
  echo "deploy/tools/install.sh: $*" >&2
  exit 1
}

install_kustomize() {
  local have=""
  [[ -x "$BIN/kustomize" ]] && have="$("$BIN/kustomize" version 2>/dev/null || true)"
  if [[ "$have" == "$KUSTOMIZE_VERSION" ]]; then
    return
  fi
  command -v go >/dev/null || fail "go is required to install kustomize $KUSTOMIZE_VERSION (none on PATH)"
  echo "installing kustomize $KUSTOMIZE_VERSION" >&2
  # GOTOOLCHAIN=local: never fetch another Go toolchain behind our back.
  GOBIN="$BIN" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
    go install -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$KUSTOMIZE_VERSION" \
    "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >&2 \
    || fail "go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION failed"
  [[ "$("$BIN/kustomize" version)" == "$KUSTOMIZE_VERSION" ]] \
    || fail "kustomize installed but does not report $KUSTOMIZE_VERSION"
}

install_kubernetes_validate() {
  local venv="$TOOLS_DIR/venv"
  local have=""
  [[ -x "$venv/bin/kubernetes-validate" ]] && have="$("$venv/bin/kubernetes-validate" --version 2>/dev/null || true)"
  if [[ "$have" == *"$KUBERNETES_VALIDATE_VERSION"* ]]; then
    ln -sf "$venv/bin/kubernetes-validate" "$BIN/kubernetes-validate"
    return
  fi
  command -v python3 >/dev/null || fail "python3 is required to install kubernetes-validate (none on PATH)"
  echo "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION" >&2
  python3 -m venv "$venv" || fail "python3 -m venv failed (install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2 \
    || fail "pip install kubernetes-validate==$KUBERNETES_VALIDATE_VERSION failed"
  ln -sf "$venv/bin/kubernetes-validate" "$BIN/kubernetes-validate"
  "$BIN/kubernetes-validate" --version >/dev/null 2>&1 \
    || fail "kubernetes-validate installed but does not run"
}

install_kustomize
install_kubernetes_validate
echo "$BIN"
