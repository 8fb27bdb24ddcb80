#!/usr/bin/env bash
# Rebuilds loudness.wasm in this directory: libebur128 1.2.6 (MIT, Jan Kokemüller; Debian's
# orig tarball), minimp3 (CC0, lieff; as the crates.io package minimp3-sys 0.3.2 ships it), each
# checked against the SHA-256 below, and our meter-shim.c, compiled with clang for wasm32-wasi
# against Debian's wasi-libc. The module imports nothing.
# Needs Debian bookworm (root for apt-get when the compiler is missing) and network access to
# deb.debian.org and static.crates.io. Run: bash services/audio/loudness/wasm/build.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

VERSION=1.2.6
URL="http://deb.debian.org/debian/pool/main/libe/libebur128/libebur128_${VERSION}.orig.tar.gz"
SHA256=baa7fc293a3d4651e244d8022ad03ab797ca3c2ad8442c43199afe8059faa613
MP3_URL="https://static.crates.io/crates/minimp3-sys/minimp3-sys-0.3.2.crate"
MP3_SHA256=e21c73734c69dc95696c9ed8926a2b393171d98b3f5f5935686a26a487ab9b90

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
if ! command -v clang >/dev/null || ! command -v wasm-ld >/dev/null || [[ ! -f /usr/lib/wasm32-wasi/libc.a ]] \
  || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a" >/dev/null; then
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq clang lld wasi-libc libclang-rt-14-dev-wasm32 >/dev/null
fi

cd "$work"
curl -sSfL -o src.tar.gz "$URL"
echo "$SHA256  src.tar.gz" | sha256sum -c --quiet
tar xzf src.tar.gz
S="libebur128-$VERSION/ebur128"
curl -sSfL -o minimp3.tar.gz "$MP3_URL"
echo "$MP3_SHA256  minimp3.tar.gz" | sha256sum -c --quiet
tar xzf minimp3.tar.gz
M="minimp3-sys-0.3.2/minimp3"

# -O3, no -ffast-math: the library's -HUGE_VAL for "below the gate" and its summation order stay
# as upstream tests them. (-msimd128 was tried: no faster, and minimp3's float output then moved
# by 0.3 LU, where the scalar build agrees with mpg123 within 0.01 LU.)
# Reactor: no main; _initialize sets up the C library, the host calls it once.
# The library's own sys/queue.h; the only warning is its notice that without SSE it flushes
# denormals by hand.
clang --target=wasm32-wasi --sysroot=/usr -O3 -mexec-model=reactor -Wno-\#warnings \
  -I"$S" -I"$S/queue" -I"$M" "$here/meter-shim.c" \
  -Wl,--strip-all -o loudness.wasm

cp loudness.wasm "$here/loudness.wasm"
cp "libebur128-$VERSION/COPYING" "$here/COPYING.libebur128"
cp "$M/LICENSE" "$here/COPYING.minimp3"
echo "wrote $here/loudness.wasm ($(wc -c < loudness.wasm) bytes)"
