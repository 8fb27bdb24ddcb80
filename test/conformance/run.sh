#!/usr/bin/env bash
# Runs the Connect conformance suite (connectrpc.com/conformance) against our
# RPC server stack: test/conformance/server.ts on startRpcServer, the unary fast
# path in front of connect-node. Installs the runner with the Go toolchain when
# it is missing. Exits non-zero on any unexpected result, and when the fast path
# answered none of the calls it claims (a sign it quietly stopped serving them).
#   npm run conformance            # the whole matrix (config.yaml)
#   npm run conformance -- --run 'Basic/**' -v   # extra runner flags
#   npm run conformance:generate   # regenerate test/conformance/gen from the suite's protos
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

VERSION=v1.0.7  # its go.mod needs go >= 1.26.0
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null; then
  echo "conformance: the Go toolchain is needed to install connectconformance (https://go.dev/dl)" >&2
  exit 1
fi

if [[ "${1:-}" == "generate" ]]; then
  # The suite's protos ship in its Go module; their TypeScript lives in
  # test/conformance/gen, apart from the main gen/ and its freshness check.
  dir="$(cd /tmp && GOTOOLCHAIN=local go mod download -json "connectrpc.com/conformance@$VERSION" | node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>console.log(JSON.parse(s).Dir))')"
  npx buf generate "$dir/proto" --template test/conformance/buf.gen.yaml
  exit 0
fi

gobin="$(go env GOBIN)"
runner="${gobin:-$(go env GOPATH)/bin}/connectconformance"
if [[ ! -x "$runner" ]] || [[ "$("$runner" --version 2>/dev/null)" != *"${VERSION#v}"* ]]; then
  echo "conformance: installing connectconformance@$VERSION"
  GOTOOLCHAIN=local go install "connectrpc.com/conformance/cmd/connectconformance@$VERSION"
fi
"$runner" --version

served="$(mktemp -d)"
trap 'rm -rf "$served"' EXIT
set +e
CONFORMANCE_SERVED_DIR="$served" "$runner" --mode server \
  --conf test/conformance/config.yaml \
  --known-failing @test/conformance/known-failing.txt \
  --known-flaky @test/conformance/known-flaky.txt \
  --max-servers 2 \
  "$@" \
  -- node --import tsx test/conformance/server.ts
status=$?
set -e

fast=0 connect=0
for f in "$served"/served-*.json; do
  [[ -e "$f" ]] || continue
  read -r a b < <(node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(s.fastPath,s.connect)' "$f")
  fast=$((fast + a)) connect=$((connect + b))
done
echo "conformance: the fast path answered $fast requests, connect-node $connect"
if [[ $status -ne 0 ]]; then
  echo "conformance: the runner reported unexpected results (exit $status)" >&2
  exit "$status"
fi
if [[ $# -eq 0 && $fast -eq 0 ]]; then
  echo "conformance: the fast path answered no call; Connect-binary unary calls over HTTP/2 should reach it" >&2
  exit 1
fi
