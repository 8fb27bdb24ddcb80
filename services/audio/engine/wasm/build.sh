#!/usr/bin/env bash
# Rebuilds the WASM speech engine in this directory from source:
#   espeak-ng.wasm + espeak-ng.cjs  eSpeak NG 1.51 (GPL-3.0-or-later) with Debian bookworm's source patches
#   espeak-ng-data/                 the English and German subset of Debian's espeak-ng-data 1.51 package
#   lame.wasm                       LAME 3.100 (LGPL-2.0-or-later), Debian bookworm's source
# Needs Debian bookworm (apt sources incl. deb-src), root for apt-get, and an eSpeak NG 1.51 source tree:
#   ESPEAK_SRC=/path/to/espeak-ng (git tag 1.51), else it is cloned from upstream.
# Debian's espeak-ng orig tarball is the same tree; use it instead when a mirror serves it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
command -v emcc >/dev/null || { as_root apt-get update -qq; DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq emscripten node-acorn >/dev/null; }
# Debian's emscripten runs its JS optimizer with the system node, which must find Debian's acorn.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

cd "$work"
# --- sources -------------------------------------------------------------------------------
apt-get source --download-only lame=3.100-6 >/dev/null 2>&1
apt-get download espeak-ng-data=1.51+dfsg-10+deb12u2 >/dev/null 2>&1
tar xzf lame_3.100.orig.tar.gz
if [[ -z "${ESPEAK_SRC:-}" ]]; then
  git clone --quiet --depth 1 --branch 1.51 https://github.com/espeak-ng/espeak-ng.git espeak-ng
  ESPEAK_SRC="$work/espeak-ng"
fi
mkdir espeak && cp -r "$ESPEAK_SRC/src" espeak/
# Debian's patches to the library sources (security fixes, buffer sizes, cancel, path length). The
# orig tarball may be missing from a mirror; the .dsc and the Debian tarball are fetched before that.
apt-get source --download-only espeak-ng=1.51+dfsg-10+deb12u2 >/dev/null 2>&1 || true
if ls espeak-ng_1.51+dfsg-10+deb12u2.debian.tar.xz >/dev/null 2>&1; then
  tar xJf espeak-ng_1.51+dfsg-10+deb12u2.debian.tar.xz
  for p in bufsize fix-cancel big-endian long-build-path CVE; do
    # Hunks for files outside src/ (tests) do not apply here and are skipped.
    (cd espeak && patch -p1 --batch --forward < "../debian/patches/$p" | grep "^patching file src/" || true)
  done
else
  echo "warning: Debian's espeak-ng patches were not available" >&2
fi

# --- eSpeak NG ---------------------------------------------------------------------------------
S=espeak/src
printf '#define PACKAGE_VERSION "1.51"\n#define HAVE_MKSTEMP 1\n' > espeak/config.h
srcs=()
for f in case categories ctype proplist scripts tostring; do srcs+=("$S/ucd-tools/src/$f.c"); done
for f in compiledata compiledict compilembrola dictionary encoding error espeak_api ieee80 intonation mnemonics numbers \
  readclause phoneme phonemelist setlengths soundicon spect speech ssml synthdata synthesize synth_mbrola translate \
  tr_languages voices wavegen; do srcs+=("$S/libespeak-ng/$f.c"); done
emcc -O3 -w -Iespeak -I$S/include -I$S/ucd-tools/src/include -I$S/libespeak-ng -DLIBESPEAK_NG_EXPORT \
  "${srcs[@]}" "$here/espeak-glue.c" --js-library "$here/espeak-imports.js" \
  -sMODULARIZE -sEXPORT_NAME=createEspeak -sENVIRONMENT=node -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0 \
  -sALLOW_MEMORY_GROWTH -sINITIAL_MEMORY=8MB -sFORCE_FILESYSTEM=1 \
  -sEXPORTED_FUNCTIONS=_tts_init,_tts_set_voice,_tts_set_param,_tts_speak,_malloc,_free \
  -sEXPORTED_RUNTIME_METHODS=FS,stringToUTF8,lengthBytesUTF8 \
  -o espeak-ng.js
# The package is ESM; the generated loader is CommonJS.
cp espeak-ng.js "$here/espeak-ng.cjs"
cp espeak-ng.wasm "$here/espeak-ng.wasm"

# Data: the phoneme tables, the English and German dictionaries and voices, the standard variants
# (f1-f5, m1-m8: voices.ts picks from them).
dpkg-deb -x espeak-ng-data_*.deb data
D="$(dirname "$(find data -type f -name phontab | head -1)")"
rm -rf "$here/espeak-ng-data"
mkdir -p "$here/espeak-ng-data/lang/gmw" "$here/espeak-ng-data/voices"
cp "$D"/{phontab,phonindex,phondata,intonations,en_dict,de_dict} "$here/espeak-ng-data/"
cp "$D"/lang/gmw/{en-US,de} "$here/espeak-ng-data/lang/gmw/"
mkdir -p "$here/espeak-ng-data/voices/!v"
for v in f1 f2 f3 f4 f5 m1 m2 m3 m4 m5 m6 m7 m8; do cp "$D/voices/!v/$v" "$here/espeak-ng-data/voices/!v/"; done

# --- LAME ----------------------------------------------------------------------------------------
L=lame-3.100
(cd $L && emconfigure ./configure --host=i686-linux --disable-shared --enable-static --disable-frontend \
  --disable-decoder --disable-gtktest --disable-analyzer-hooks CFLAGS=-O3 >/dev/null)
lsrcs=()
for f in VbrTag bitstream encoder fft gain_analysis id3tag lame newmdct presets psymodel quantize quantize_pvt \
  reservoir set_get tables takehiro util vbrquantize version; do lsrcs+=("$L/libmp3lame/$f.c"); done
emcc -O3 -w -DHAVE_CONFIG_H -I$L -I$L/include -I$L/libmp3lame "${lsrcs[@]}" "$here/lame-glue.c" \
  -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH -sTOTAL_STACK=262144 -sINITIAL_MEMORY=2MB \
  -sEXPORTED_FUNCTIONS=_enc_open,_enc_encode,_enc_flush,_enc_close,_malloc,_free \
  -o "$here/lame.wasm"

# Licences travel with the binaries.
cp "$ESPEAK_SRC/COPYING" "$here/COPYING.espeak-ng"
cp "$(find data -path '*doc/espeak-ng-data/copyright' | head -1)" "$here/copyright.espeak-ng-data"
cp $L/COPYING "$here/COPYING.lame"

ls -l "$here"
