#!/usr/bin/env bash
# Rebuilds ebur128.wasm in this directory: libebur128 1.2.6 (MIT, Jan Kokemüller; Debian's
# orig tarball, checked against the SHA-256 below) and our meter-shim.c, compiled with clang for
# wasm32-wasi against Debian's wasi-libc. The module imports nothing.
# Needs Debian bookworm (root for apt-get when the compiler is missing) and network access to
# deb.debian.org. Run: bash services/audio/loudness/wasm/build.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

VERSION=1.2.6
URL="http://deb.debian.org/debian/pool/main/libe/libebur128/libebur128_${VERSION}.orig.tar.gz"
SHA256=baa7fc293a3d4651e244d8022ad03ab797ca3c2ad8442c43199afe8059faa613

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

# -O3, no -ffast-math: the library's -HUGE_VAL for "below the gate" and its summation order stay
# as upstream tests them. (-msimd128 and -ffast-math-free reassociation were tried: the true-peak
# interpolator's indexed taps do not vectorize, and neither was faster.)
# Reactor: no main; _initialize sets up the C library, the host calls it once.
# The library's own sys/queue.h; the only warning is its notice that without SSE it flushes
# denormals by hand.
clang --target=wasm32-wasi --sysroot=/usr -O3 -mexec-model=reactor -Wno-\#warnings \
  -I"$S" -I"$S/queue" "$S/ebur128.c" "$here/meter-shim.c" \
  -Wl,--strip-all -o ebur128.wasm

cp ebur128.wasm "$here/ebur128.wasm"
cp "libebur128-$VERSION/COPYING" "$here/COPYING.libebur128"
echo "wrote $here/ebur128.wasm ($(wc -c < ebur128.wasm) bytes)"
