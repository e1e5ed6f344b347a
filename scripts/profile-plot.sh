#!/bin/sh
# Draw the profile plot of docs/profile.md with the tool itself: the
# certified trade-off curve of DP-SGD on MNIST (N = 60,000, B = 600 so
# q = 0.01, σ = 4, 100 epochs) under the pld accountant.
#
# Usage: scripts/profile-plot.sh   (writes docs/profile/mnist-tradeoff.png)
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dpcalc" ./cmd/dpcalc
mkdir -p docs/profile
"$tmp/dpcalc" profile --sigma 4 --q 0.01 --epochs 100 --plot docs/profile/mnist-tradeoff.png >/dev/null
echo "profile-plot.sh: wrote docs/profile/mnist-tradeoff.png" >&2
