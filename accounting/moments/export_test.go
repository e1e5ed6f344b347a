package moments

// Exported for the external tests.
var LatticeOrder = latticeOrder

const (
	LatticeMin   = latticeMin
	LatticeMax   = latticeMax
	LatticeSplit = latticeSplit
)
