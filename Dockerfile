# syntax=docker/dockerfile:1
# One image for every process; the command picks the service, e.g.
#   docker run IMAGE dist/services/auth/main.js
# Production runs compiled JavaScript, so neither tsx nor the compiler is needed at run time.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
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
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# The WASM engine's eSpeak NG, LAME and voice data sit beside its compiled code.
COPY --from=build /app/services/audio/engine/wasm ./dist/services/audio/engine/wasm
# The loudness meter (libebur128, our WebAssembly build) beside its compiled code.
COPY --from=build /app/services/audio/loudness/wasm/loudness.wasm ./dist/services/audio/loudness/wasm/loudness.wasm
# The player script is served as written, beside the gateway's compiled code.
COPY --from=build /app/gateway/player/player.js ./dist/gateway/player/player.js
COPY proto ./proto
# Application files stay root-owned: the process can read but never rewrite its own code.
USER 10001:10001
EXPOSE 8080 7001 7002 7003 9464
ENTRYPOINT ["node"]
CMD ["dist/gateway/main.js"]
