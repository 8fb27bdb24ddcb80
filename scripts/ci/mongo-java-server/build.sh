#!/usr/bin/env bash
# Resolves the jars of the in-memory MongoDB stand-in and compiles its
# launcher into a cache dir keyed by the content of this folder, then prints
# that dir. Later calls find it ready and return at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${ARTICLE_AUDIO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/article-audio}/mongo-java-server"
key="$(cat "$here/pom.xml" "$here/Launcher.java" | sha256sum | cut -c1-16)"
out="$cache_root/$key"
if [[ -f "$out/ready" ]]; then
  echo "$out"
  exit 0
fi
for tool in java javac mvn; do
  command -v "$tool" >/dev/null || { echo "mongo-java-server: $tool is not installed" >&2; exit 3; }
done
mkdir -p "$cache_root"
work="$(mktemp -d "$cache_root/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$work/lib" >&2
javac -nowarn -d "$work/classes" -cp "$work/lib/*" "$here/Launcher.java" >&2
touch "$work/ready"
# Another run may have finished first; theirs is as good as ours.
mv -T "$work" "$out" 2>/dev/null || true
echo "$out"
