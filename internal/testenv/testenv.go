// Package testenv holds the test suite's conventions about how much to run.
//
// The default `go test ./...` runs a representative, cheaper subset of every
// sweep and long reference; the long test step (DPCALC_LONG set to any
// non-empty value, see .ci/run) runs them in full. A long variant never
// replaces a check by a skip: the default run keeps a subset of the same
// checks.
package testenv

import (
	"os"
	"testing"
)

// LongEnv is the environment variable that turns on the long test step.
const LongEnv = "DPCALC_LONG"

// Long reports whether the long test step is on: DPCALC_LONG is set and not
// empty.
func Long() bool { return os.Getenv(LongEnv) != "" }

// SkipUnlessLong skips t, saying why, unless the long test step is on. Use
// it for a test whose cheaper variant runs by default elsewhere.
func SkipUnlessLong(t testing.TB, why string) {
	t.Helper()
	if !Long() {
		t.Skipf("long test step only (set %s=1): %s", LongEnv, why)
	}
}

// Size returns long in the long test step and def otherwise: the size of a
// sweep whose default run checks a subset of the long one.
func Size(def, long int) int {
	if Long() {
		return long
	}
	return def
}
