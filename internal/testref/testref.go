// Package testref loads the committed high-precision reference tables under
// testdata/ for tests.
package testref

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

// Floats returns the rows of the whitespace-separated table of numbers at
// path (relative to the test's directory; lines starting with # and blank
// lines skipped), each with exactly cols numbers, and the lines they came
// from; it fails t on anything else.
func Floats(t testing.TB, path string, cols int) (rows [][]float64, lines []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != cols {
			t.Fatalf("%s: %q has %d fields, want %d", path, line, len(f), cols)
		}
		row := make([]float64, cols)
		for i, s := range f {
			if row[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
		}
		rows, lines = append(rows, row), append(lines, line)
	}
	return rows, lines
}
