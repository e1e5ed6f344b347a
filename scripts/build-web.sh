#!/usr/bin/env bash
# build-web.sh OUTDIR: build the web calculator into OUTDIR, a static site
# (index.html, app.js, worker.js, wasm_exec.js, main.wasm) that any static
# host can serve; `dpcalc serve --dir OUTDIR` serves it locally.
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
goroot="$(go env GOROOT)"
# Go 1.24 moved wasm_exec.js from misc/wasm to lib/wasm.
wasm_exec=""
for f in "$goroot/lib/wasm/wasm_exec.js" "$goroot/misc/wasm/wasm_exec.js"; do
	if [ -f "$f" ]; then
		wasm_exec="$f"
		break
	fi
done
if [ -z "$wasm_exec" ]; then
	echo "build-web.sh: wasm_exec.js not found under $goroot/lib/wasm or $goroot/misc/wasm" >&2
	exit 1
fi
# Build into a temporary name and rename, so OUTDIR never holds half a file.
tmp="$(mktemp "$out/.main.wasm.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
(cd "$root" && GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$tmp" ./web/wasm)
chmod 0644 "$tmp"
mv "$tmp" "$out/main.wasm"
install -m 0644 "$wasm_exec" "$out/wasm_exec.js"
install -m 0644 "$root"/web/static/* "$out/"
echo "built $out: main.wasm $(wc -c <"$out/main.wasm") bytes"
