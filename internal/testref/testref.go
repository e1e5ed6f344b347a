// Package testref loads the committed high-precision reference tables under
// testdata/ for tests.
package testref

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path returns the absolute path of rel under the repository's testdata/.
func Path(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", rel)
}

// CSV returns the records of the reference CSV file testdata/rel, header row
// included; it fails t if the file cannot be read.
func CSV(t testing.TB, rel string) [][]string {
	t.Helper()
	f, err := os.Open(Path(rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
