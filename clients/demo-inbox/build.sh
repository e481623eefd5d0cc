#!/bin/sh
# Builds Herald's demo inbox page (served at /demo by `herald serve`) from
# the committed package-lock.json: the official @novu/js UI bundled with
# esbuild into ../../internal/demo/dist/inbox.js, which the Go binary embeds
# (so `go build` needs no npm). Run it after changing main.js or the lock
# file, and commit the result.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../../internal/demo/dist
mkdir -p "$out"
npx esbuild main.js --bundle --minify --format=esm --target=es2020 \
  --legal-comments=none --log-level=warning --outfile="$out/inbox.js"
cp index.html "$out/index.html"
echo "built $out/inbox.js ($(wc -c <"$out/inbox.js") bytes)"
