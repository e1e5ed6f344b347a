#!/bin/sh
# pld-sigma-sweep.sh BINARY [OUT]: pld's σ calibration at every setting of
# testdata/pld/width_sweep.txt, each at the upper end of its ε bracket (so
# the answer is the sweep's σ): one line per setting, "σ q T δ ε | wall user
# sys | σ found", then a summary of the CPU seconds (user + sys). Run it on
# two binaries (e.g. built from main and from the work tree) to compare.
# Not a CI test; it takes minutes. Usage: scripts/pld-sigma-sweep.sh /tmp/dpc
set -eu
bin=${1:?usage: pld-sigma-sweep.sh BINARY [OUT]}
out=${2:-/dev/stdout}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
grep -v '^#' "$root/testdata/pld/width_sweep.txt" | while read -r line; do
	set -- $line
	sig=$1 q=$2 steps=$3
	echo "$line" | tr '|' '\n' | tail -n +2 | grep ':' | while read -r seg; do
		d=${seg%%:*}
		eps=$(echo "$seg" | sed 's/.*, \([0-9.e+-]*\)\].*/\1/')
		t=$({ /usr/bin/time -f '%e %U %S' "$bin" sigma --eps "$eps" --q "$q" --steps "$steps" --delta "$d" --accountant pld --json >"$tmp"; } 2>&1 | tail -1)
		s=$(grep -o '"sigma": *[^,]*' "$tmp" | head -1 | sed 's/"sigma": *//')
		echo "$sig $q $steps $d $eps | $t | $s"
	done
done | tee "$out" | awk -F'|' '
	{ split($2, t, " "); c = t[2] + t[3]; n++; s += c; if (c > m) m = c; if (c <= 0.5) a++; if (c <= 2) b++; print }
	END { printf "# %d settings: CPU seconds total %.1f, max %.2f; %d within 0.5 s, %d within 2 s\n", n, s, m, a, b }'
