#!/bin/sh
# pld-sigma-sweep.sh [-b BASELINE] BINARY [OUT]: pld's σ calibration at
# every setting of testdata/pld/width_sweep.txt, each at the upper end of
# its ε bracket (so the answer is the sweep's σ): one line per setting,
# "σ q T δ ε | wall user sys | σ found", then a summary of the CPU seconds
# (user + sys). With -b, each setting runs BASELINE and then BINARY, one
# right after the other (so that a shared machine's load, which swings by
# 50% over minutes, falls on both alike): the line has BASELINE's
# "| wall user sys | σ found" after BINARY's, and the summary is printed
# for both, BINARY's first. OUT, if given, gets the lines without the
# summary. Not a CI test; it takes minutes.
# Usage: scripts/pld-sigma-sweep.sh -b /tmp/dpc-main /tmp/dpc
set -eu
base=
if [ "${1:-}" = "-b" ]; then
	base=${2:?usage: pld-sigma-sweep.sh [-b BASELINE] BINARY [OUT]}
	shift 2
fi
bin=${1:?usage: pld-sigma-sweep.sh [-b BASELINE] BINARY [OUT]}
out=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# run B ARGS...: "wall user sys | σ found" of one calibration by binary B.
run() {
	b=$1
	shift
	t=$({ /usr/bin/time -f '%e %U %S' "$b" sigma "$@" --accountant pld --json >"$tmp"; } 2>&1 | tail -1)
	s=$(grep -o '"sigma": *[^,]*' "$tmp" | head -1 | sed 's/"sigma": *//')
	echo "$t | $s"
}
grep -v '^#' "$root/testdata/pld/width_sweep.txt" | while read -r line; do
	set -- $line
	sig=$1 q=$2 steps=$3
	echo "$line" | tr '|' '\n' | tail -n +2 | grep ':' | while read -r seg; do
		d=${seg%%:*}
		eps=$(echo "$seg" | sed 's/.*, \([0-9.e+-]*\)\].*/\1/')
		if [ -n "$base" ]; then
			b=$(run "$base" --eps "$eps" --q "$q" --steps "$steps" --delta "$d")
			echo "$sig $q $steps $d $eps | $(run "$bin" --eps "$eps" --q "$q" --steps "$steps" --delta "$d") | $b"
		else
			echo "$sig $q $steps $d $eps | $(run "$bin" --eps "$eps" --q "$q" --steps "$steps" --delta "$d")"
		fi
	done
done | if [ -n "$out" ]; then tee "$out"; else cat; fi | awk -F'|' '
	function add(i, f) { split(f, t, " "); c = t[2] + t[3]; s[i] += c; if (c > m[i]) m[i] = c; if (c <= 0.5) a[i]++; if (c <= 2) b[i]++ }
	{ n++; add(1, $2); if (NF >= 5) { add(2, $4); two = 1 }; print }
	END {
		printf "# %d settings: CPU seconds total %.1f, max %.2f; %d within 0.5 s, %d within 2 s\n", n, s[1], m[1], a[1], b[1]
		if (two) printf "# baseline, same runs: CPU seconds total %.1f, max %.2f; %d within 0.5 s, %d within 2 s\n", s[2], m[2], a[2], b[2]
	}'
