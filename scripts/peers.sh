#!/bin/sh
# Benchmark dpcalc's rdp, ma and pld against Opacus' RDP, dp_accounting's RDP
# and PLD and prv_accountant on 8 named examples and 40 seeded random DP-SGD
# settings; writes testdata/peers/peers.csv and docs/peers.md (see the
# docstring of scripts/peers/peers.py for what is run and how it is timed).
#
# Usage: nice -n 10 scripts/peers.sh [extra peers.py flags, e.g. --n 10]
#
# The peers' sources: $DP_ACCOUNTING_SRC (google/differential-privacy's
# python/dp_accounting), $OPACUS_SRC (pytorch/opacus root), $PRV_SRC
# (microsoft/prv_accountant root); each unset one is exported from the bare
# git mirror under $PEERS_MIRROR (default /work/.mirror), where the helpers'
# fetch tool puts google+differential-privacy/repo etc. The peers need only
# Debian's python3-numpy, python3-scipy, python3-attr, python3-absl and
# python3-mpmath (apt-get install them); $PYTHON defaults to /usr/bin/python3.
# Takes about 6.5 minutes on 2 cores. After a change to rdp or pld, re-run it
# and commit testdata/peers/peers.csv and docs/peers.md together.
set -eu
cd "$(dirname "$0")/.."
mirror=${PEERS_MIRROR:-/work/.mirror}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
revs=""
# export_peer REPO PATHS: extracts PATHS from the mirror's HEAD into $tmp/REPO
export_peer() {
	# shellcheck disable=SC2086 # $2 is a list of paths
	git --git-dir="$mirror/$1/repo" archive HEAD $2 | tar -x -C "$tmp/$1" &&
		revs="$revs ${1%%+*}/${1#*+}@$(git --git-dir="$mirror/$1/repo" rev-parse --short=12 HEAD)"
}
for p in google+differential-privacy pytorch+opacus microsoft+prv_accountant; do mkdir -p "$tmp/$p"; done
if [ -z "${DP_ACCOUNTING_SRC:-}" ]; then
	export_peer google+differential-privacy python/dp_accounting
	DP_ACCOUNTING_SRC=$tmp/google+differential-privacy/python/dp_accounting
fi
if [ -z "${OPACUS_SRC:-}" ]; then
	export_peer pytorch+opacus opacus
	OPACUS_SRC=$tmp/pytorch+opacus
fi
if [ -z "${PRV_SRC:-}" ]; then
	export_peer microsoft+prv_accountant "prv_accountant setup.py"
	PRV_SRC=$tmp/microsoft+prv_accountant
fi
go build -o "$tmp/dpcalc" ./cmd/dpcalc
"$python" scripts/peers/peers.py --dpcalc "$tmp/dpcalc" --dp-accounting "$DP_ACCOUNTING_SRC" \
	--opacus "$OPACUS_SRC" --prv "$PRV_SRC" --revisions "${revs# }" "$@"
