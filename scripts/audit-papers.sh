#!/usr/bin/env bash
# Audits every noise multiplier the three papers publish with `dpcalc audit`
# and prints the Markdown table of docs/accountants.md. Usage: scripts/audit-papers.sh [DPCALC]
set -euo pipefail
D=${1:-"go run ./cmd/dpcalc"}
cd "$(dirname "$0")/.."
echo "| paper, setting | published σ | claimed (ε, δ) | q | epochs | certified ε at σ | verdict | certified ε at 2σ | verdict at 2σ |"
echo "|---|---|---|---|---|---|---|---|---|"
while IFS=';' read -r label sigma eps delta q epochs; do
	row=("$label" "$sigma" "($eps, $delta)" "$q" "$epochs")
	for s in "$sigma" "$(awk -v s="$sigma" 'BEGIN{print 2*s}')"; do
		json=$($D audit --sigma "$s" --q "$q" --epochs "$epochs" --eps "$eps" --delta "$delta" --json 2>/dev/null || true)
		row+=("$(printf '%s' "$json" | python3 -c 'import json,sys; r=json.load(sys.stdin); v=r["verdict"]; p=[x for x in r["rows"] if x["accountant"] == "pld"][0]; print("[%.4g, %.4g] | %s" % (p["epsilon_lower"], p["epsilon_upper"], v if v == "holds" else "**%s**" % v))')")
	done
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${row[@]}"
done <<'ROWS'
Abadi §5.1, moments accountant;4;1.26;1e-5;0.01;100
Abadi §5.1, moments accountant;4;2.55;1e-5;0.01;400
DPD §5 MNIST, DPD-AC;10.88;0.5;1e-4;0.01;200
DPD §5 MNIST, DPD-zCDP;3.23;0.5;1e-4;0.01;200
DPVD §5 MNIST, DPVD-AC;8.24;1;1e-5;0.01;200
DPVD §5 MNIST, DPVD-zCDP;2.68;1;1e-5;0.01;200
DPVD §5 DIGITS, DPVD-AC;9.73;1;1e-5;0.05;100
DPVD §5 DIGITS, DPVD-zCDP;2.97;1;1e-5;0.05;100
ROWS
