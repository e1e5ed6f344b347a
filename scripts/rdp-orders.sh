#!/bin/sh
# rdp-orders.sh: regenerate testdata/moments/rdp_orders_table.md, the table
# of docs/rdp-orders.md: rdp's ε on the old DefaultOrders grid, on Opacus'
# and dp_accounting's default order grids (with dpcalc's α) and with the
# continuous order search, on the first example of docs/rdp-orders.md and 40 seeded random
# DP-SGD settings. Not a CI test (TestRDPOrdersTable skips without the env
# variable). Run from the repository root; a few seconds.
set -eu
DPCALC_RDP_ORDERS_TABLE=1 nice -n 10 go test -count=1 -run '^TestRDPOrdersTable$' -v ./accounting/moments/ |
	sed -n 's/^        //p' | sed -e '/^$/d' >testdata/moments/rdp_orders_table.md.tmp
mv testdata/moments/rdp_orders_table.md.tmp testdata/moments/rdp_orders_table.md
