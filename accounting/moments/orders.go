package moments

// DefaultOrders is the default grid of moment orders λ (Rényi order λ+1)
// used by [NewMA] and [NewRDP]: 1 to 4 in steps of 1/4, 4.5 to 10 in steps
// of 1/2, the integers 11 to 24, then 26, 28, 30, 32, 36, 40, 48, 56, 64,
// 80, 96, 128, 192 and 256 (53 orders).
//
// Fractional orders below 10 matter for large T·q² (ε of a few or more),
// where the optimal λ is small; the sparse tail up to 256 serves tiny q and
// large σ. The grid is denser where ε changes fastest in λ. The cost of an
// ε query for a fresh σ grows linearly with the number of orders.
var DefaultOrders = defaultOrders()

func defaultOrders() []float64 {
	var o []float64
	for l := 1.0; l <= 4; l += 0.25 {
		o = append(o, l)
	}
	for l := 4.5; l <= 10; l += 0.5 {
		o = append(o, l)
	}
	for l := 11.0; l <= 24; l++ {
		o = append(o, l)
	}
	return append(o, 26, 28, 30, 32, 36, 40, 48, 56, 64, 80, 96, 128, 192, 256)
}

// PeerOrders are the moment orders λ (Rényi order λ+1) of the peers'
// default grids: dp_accounting's RdpAccountant (DEFAULT_RDP_ORDERS, Rényi
// orders 1.1, 1.2, …, 10.9, 11, 12, …, 63, 128, 256, 512, 1024) and
// Opacus' RDPAccountant (DEFAULT_ALPHAS: 1.1 … 10.9 and 12 … 63, a subset
// of the former), ascending. The continuous search evaluates the ones
// around its optimum too, so its bound is never above what those grids
// give with dpcalc's α.
var PeerOrders = peerOrders()

func peerOrders() []float64 {
	var o []float64
	for x := 1; x < 100; x++ {
		o = append(o, float64(x)/10)
	}
	for a := 11; a <= 63; a++ {
		o = append(o, float64(a-1))
	}
	return append(o, 127, 255, 511, 1023)
}
