// Package profile states the privacy of a composition in the words people
// use: ε at a list of δ, the δ(ε) curve, and the trade-off curve of
// membership inference (the smallest false-negative rate β any test can
// have at false-positive rate α), with the attacker's best true-positive
// rate at a given false-positive rate and the best balanced accuracy.
//
// Every number comes from one accounting method's ε(δ) and δ(ε): with an
// [accounting.Accountant] (pld by default in the CLI, the tightest
// certified one) the trade-off bound is certified, because each δ(ε) is
// an upper bound; a [accounting.Procedure]'s profile is computed the same
// way and labelled not certified.
package profile
