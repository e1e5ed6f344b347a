#!/usr/bin/env bash
# Trains DP-SGD on DIGITS and MNIST with 1,000 audit canaries (input and
# gradient) at ε ∈ {0.5, 1, 2, 8}, plus non-private runs, and writes the
# table of docs/audit.md between its "audit-tables" markers: the certified
# interval of each run beside the empirical lower bounds of its one-run
# audit. Usage: scripts/audit-canaries.sh [DPCALC]
#
# Sizes: the data sets' default settings (DIGITS: 1,437 training examples,
# lot 100, 500 hidden units, 100 epochs; MNIST: 60,000, lot 600, 1,000
# hidden units, 10 epochs), 1,000 canaries, δ = 1e-5, 95% confidence,
# --seed 1 and --canary-seed 2. MNIST needs DPCALC_DATA_DIR (or
# DPCALC_SKIP_MNIST=1 to leave its rows out). About 1 minute per MNIST run
# and 3 seconds per DIGITS run on the 2-core development machine.
set -euo pipefail
D=${1:-}
cd "$(dirname "$0")/.."
if [ -z "$D" ]; then
	go build -o /tmp/dpcalc-audit-canaries ./cmd/dpcalc
	D=/tmp/dpcalc-audit-canaries
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
	echo "| data set | method | budget ε | canaries | σ | test accuracy | certified ε at δ = 1e-5 | empirical ε ≥ (one run) | guesses right | ε ≥ (Gaussian f-DP) | many-run Clopper–Pearson |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	datasets="digits mnist"
	if [ "${DPCALC_SKIP_MNIST:-}" != "" ]; then datasets="digits"; fi
	for ds in $datasets; do
		for eps in 0.5 1 2 8 np; do
			for kind in input gradient; do
				if [ "$eps" = np ]; then
					args=(--method np)
				else
					args=(--eps "$eps")
				fi
				"$D" train --dataset "$ds" "${args[@]}" --canaries 1000 --canary-kind "$kind" \
					--seed 1 --canary-seed 2 --quiet --json 2>/dev/null |
					python3 -c '
import json, sys
r = json.load(sys.stdin)
res = r["training"]
rows = {x["accountant"]: x for x in r["rows"]}
def g(x): return "%.3g" % x
pld = rows.get("pld")
if pld and pld.get("epsilon_upper") is not None:
    cert = "[%s, %s]" % (g(pld["epsilon_lower"]), g(pld["epsilon_upper"]))
else:
    cert = "none (not private)"
eps = sys.argv[2]
method = res["config"]["method"]
sigma = g(res["noise_multiplier"]) if method != "np" else "-"
one, fdp, cp = rows["one-run"], rows["fdp"], rows["clopper-pearson"]
right = "%d of %d" % (one["correct"], one["guesses"]) if one["guesses"] else "-"
print("| %s | %s | %s | %d %s (%d in) | %s | %.3f | %s | **%s** | %s | %s | %s |" % (
    sys.argv[1], method, eps if eps != "np" else "-", one["canaries"], res["audit"]["kind"], one["members"],
    sigma, res["test_accuracy"], cert, g(one["value"]), right, g(fdp["value"]), g(cp["value"])))
' "$ds" "$eps"
			done
		done
	done
} >"$out"
python3 - "$out" <<'PY'
import sys
table = open(sys.argv[1]).read()
path = "docs/audit.md"
doc = open(path).read()
begin, end = "<!-- audit-tables:begin -->\n", "<!-- audit-tables:end -->"
i, j = doc.index(begin) + len(begin), doc.index(end)
open(path + ".tmp", "w").write(doc[:i] + table + doc[j:])
import os
os.replace(path + ".tmp", path)
PY
echo "docs/audit.md: table rewritten" >&2
