// Package openblas is empty unless built with the cblas tag; see openblas.go.
package openblas
