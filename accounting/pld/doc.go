// Package pld is the privacy loss distribution accountant: certified lower
// and upper bounds on ε(δ) and δ(ε) for compositions of the mechanisms of
// package mechanism that state a privacy-loss pair, from pessimistic and
// optimistic discretisations of the privacy loss composed by FFT.
//
// The package knows no mechanism by name: each step's pairs, and what
// composes faster than by discretisation, come from mechanism.Of. Its
// files, by what they hold:
//
//	accountant.go    the Accountant: options, Compose, the steps it holds
//	query.go         EpsilonBounds, DeltaBounds and their certification
//	refine.go        grid refinement and the choice of tilt for a query
//	levels.go        the compositions per truncation and grid, lazily made
//	setup.go         the pairs per direction and the first grid's width
//	discretise.go    one step's pair on a grid: dominating and dominated
//	compose.go       composition of discretised steps by FFT, its error terms
//	fft.go           transform sizes, plans, band-limited inverses, powers
//	tilt.go          exponential tilting for small δ, and the saddle point
//	window.go        Chernoff windows from the composed cumulant
//	hockeystick.go   δ(ε) and ε(δ) of one composed distribution
//	twoscale.go      two-scale bounds for tiny sampling rates
//	group.go         many distinct steps grouped by dominance
//	closed.go        the closed form of compositions of Gaussian pairs
//	crosscheck.go    the RDP bound on the same steps
//	curve.go         ε over a range of step counts from one discretisation
//	shuffle.go       lower bounds for shuffled batches
package pld
