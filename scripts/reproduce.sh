#!/bin/sh
# Reproduce the Abadi, DPD and DPVD tables and figures with our numbers
# beside the papers': `dpcalc reproduce --paper all --profile quick`.
#
# Usage: scripts/reproduce.sh [extra dpcalc reproduce flags]
#   e.g. scripts/reproduce.sh --markdown docs/reproduction.md
#   PROFILE=tiny|quick|full (default quick), OUT=dir (default results).
# The quick and full profiles train on MNIST, read from
# $DPCALC_DATA_DIR/mnist (CI and the tests set DPCALC_DATA_DIR=../shared/data)
# or, if that is unset, dpcalc's default data directory; fetch it once with
# `dpcalc data fetch mnist`. Without it dpcalc stops at once (exit 2) and
# names the missing files; PROFILE=tiny needs no download. Finished cells
# are cached in $OUT/cache: rerunning resumes and recomputes nothing already
# done.
set -eu
cd "$(dirname "$0")/.."
profile=${PROFILE:-quick}
out=${OUT:-results}
if [ -z "${DPCALC_DATA_DIR:-}" ]; then
	echo "reproduce.sh: DPCALC_DATA_DIR is not set; using dpcalc's default MNIST directory" >&2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dpcalc" ./cmd/dpcalc
start=$(date +%s)
"$tmp/dpcalc" reproduce --paper all --profile "$profile" --out "$out" "$@"
end=$(date +%s)
echo "reproduce.sh: profile $profile: tables in $out/ (index: $out/README.md), wall time $((end - start)) s" >&2
