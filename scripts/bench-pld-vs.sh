#!/bin/sh
# bench-pld-vs.sh REF [ROUNDS]: pld benchmarks of the work tree against git ref
# REF (e.g. main), built side by side and run interleaved in the same session,
# ROUNDS times each (default 3); prints the median ns/op of each and the ratio.
# Not a CI test. Usage: nice -n 10 scripts/bench-pld-vs.sh main 3
set -eu
ref=${1:?usage: bench-pld-vs.sh REF [ROUNDS]}
rounds=${2:-3}
bench='BenchmarkPLD$/EpsilonBounds|BenchmarkPLDCalibrate|BenchmarkPLDSmallDelta'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(git rev-parse --show-toplevel)
mkdir "$tmp/ref"
git -C "$root" archive "$ref" | tar -x -C "$tmp/ref"
(cd "$tmp/ref" && go test -c -o "$tmp/ref.test" ./accounting/pld/)
(cd "$root" && go test -c -o "$tmp/new.test" ./accounting/pld/)
i=0
while [ "$i" -lt "$rounds" ]; do
	for b in ref new; do
		"$tmp/$b.test" -test.run XXX -test.bench "$bench" -test.benchtime 10x |
			awk -v b="$b" '/^Benchmark/ { print b, $1, $3 }' >>"$tmp/out"
	done
	i=$((i + 1))
done
echo "benchmark | $ref ms | this ms | ratio"
echo "---|---|---|---"
awk '
	{ v[$1, $2] = v[$1, $2] " " $3; names[$2] = 1 }
	function median(s,    a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		for (k in names) {
			r = ("ref", k) in v ? median(v["ref", k]) : 0
			n = median(v["new", k])
			printf "%s | %s | %.3f | %s\n", k, r ? sprintf("%.3f", r / 1e6) : "-", n / 1e6, r ? sprintf("%.2f", n / r) : "-"
		}
	}' "$tmp/out" | sort
