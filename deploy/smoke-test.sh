#!/usr/bin/env bash
# Smoke test of a built image with podman: the embedded default in one container, hardened
# as in deploy/k8s (read-only root file system, all capabilities dropped, no new privileges,
# non-root user, a tmpfs for DATA_DIR). It waits for /healthz, creates an article with a
# seeded token, waits for it to be ready and fetches its MP3.
#
#   bash deploy/smoke-test.sh [IMAGE]          (default article-audio:1.0.0)
#
# SMOKE_TIMEOUT (seconds, default 300) bounds each wait. Needs podman, curl and node on the host.
set -euo pipefail

image="${1:-article-audio:1.0.0}"
timeout_s="${SMOKE_TIMEOUT:-300}"
token="smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
name="article-audio-smoke-$$"
work="$(mktemp -d)"

log() { printf '[smoke-test] %s\n' "$*"; }
fail() {
  log "FAILED: $*"
  podman logs --tail 40 "$name" 2>&1 | sed 's/^/  container | /' >&2 || true
  exit 1
}
cleanup() {
  podman rm -f -t 5 "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# A free loopback port on the host for the gateway.
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
base="http://127.0.0.1:$port"
source "$(dirname "${BASH_SOURCE[0]}")/podman-opts.sh"

# slirp4netns: the host reaches the container through a loopback port only; no bridge or
# firewall rules are set up on the host.
podman run --detach --name "$name" \
  "${PODMAN_RUN_OPTS[@]}" \
  --read-only --cap-drop ALL --security-opt no-new-privileges \
  --tmpfs /tmp:rw,nosuid,nodev,size=512m,mode=1777 \
  --network slirp4netns:port_handler=slirp4netns --publish "127.0.0.1:$port:8080" \
  --env DATA_DIR=/tmp/data \
  --env "SEED_TOKENS=[{\"token\":\"$token\",\"project\":\"smoke\",\"scope\":\"full\"}]" \
  --env "AUDIO_BASE_URL=$base/audio" \
  "$image" dist/launch/embedded.js >/dev/null

node_version="$(podman exec "$name" node --version)"
user="$(podman exec "$name" id -u)"
log "container $name: Node.js $node_version, uid $user, gateway on $base"

deadline=$((SECONDS + timeout_s))
started=$SECONDS
until curl -fsS -o "$work/health.json" "$base/healthz" 2>/dev/null; do
  [[ "$(podman inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" == true ]] || fail "the container exited"
  ((SECONDS < deadline)) || fail "/healthz did not answer 200 within ${timeout_s}s"
  sleep 1
done
log "/healthz 200 after $((SECONDS - started))s: $(head -c 300 "$work/health.json")"

# The image bakes in the local voices: the audio service has said it loaded each before /healthz answers.
logs="$(podman logs "$name" 2>&1)"
for loaded in "Kokoro (English) loaded" "Pico (German) loaded"; do
  grep -qF "$loaded" <<<"$logs" || fail "no '$loaded' in the container's log"
done
log "Kokoro (English) and Pico (German) loaded"

json() { node -e 'let d="";process.stdin.on("data",c=>d+=c).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(d));console.log(v??"")})' "$1"; }

created="$(curl -fsS -X POST "$base/api/articles" \
  -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  --data '{"title":"Smoke test","text":"The container image renders this sentence to audio. A second sentence makes it a paragraph.","url":"https://example.com/smoke"}')" \
  || fail "POST /api/articles"
id="$(json id <<<"$created")"
[[ -n "$id" ]] || fail "POST /api/articles answered without an id: $created"
log "created article $id"

started=$SECONDS
deadline=$((SECONDS + timeout_s))
while :; do
  article="$(curl -fsS -H "Authorization: Bearer $token" "$base/api/articles/$id")" || fail "GET /api/articles/$id"
  status="$(json article.status <<<"$article")"
  [[ "$status" == ready ]] && break
  [[ "$status" == errored || "$status" == rejected ]] && fail "article ended $status: $article"
  ((SECONDS < deadline)) || fail "article still $status after ${timeout_s}s"
  sleep 1
done
audio="$(json article.audio <<<"$article")"
log "article ready after $((SECONDS - started))s, audio $audio"

# The URL names the gateway as configured (AUDIO_BASE_URL); fetch its path from our port.
path="/${audio#*://*/}"
code_type="$(curl -sS -o "$work/audio.mp3" -w '%{http_code} %{content_type}' "$base$path")"
bytes="$(stat -c %s "$work/audio.mp3")"
[[ "$code_type" == "200 audio/mpeg"* ]] || fail "GET $path answered $code_type"
((bytes > 0)) || fail "GET $path answered an empty body"
# An MP3 starts with an ID3 tag or an MPEG frame sync.
magic="$(od -An -N3 -tx1 "$work/audio.mp3" | tr -d ' ')"
[[ "$magic" == 494433 || "$magic" == fff* ]] || fail "GET $path is not an MP3 (starts with $magic)"
log "GET $path: $code_type, $bytes bytes"
log "PASSED ($image, Node.js $node_version)"
