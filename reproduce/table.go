package reproduce

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

// NotBuilt is the cell text for a value whose accountant is not compiled
// into this build (registry.New reports it unavailable).
const NotBuilt = "n/a (accountant not built)"

// Table is one reproduced table: a paper column (or columns) beside ours.
// Cells are strings exactly as written to both the Markdown and the CSV
// file; numeric cells are formatted with %.4g or as documented per column.
type Table struct {
	// Name is the file stem: Name.md and Name.csv.
	Name  string
	Title string
	// Columns are the CSV header and the Markdown header.
	Columns []string
	Rows    [][]string
	// Notes explain what each column means (written under the Markdown
	// table, and as "# " comment lines after the CSV rows are not used: CSV
	// stays pure).
	Notes []string
	// Verdict is generated from the numbers, one sentence per line.
	Verdict []string
	// Figures are image files (relative to the out dir) belonging to the
	// table.
	Figures []string
}

// Column returns the index of the named column, or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

func (t *Table) add(cells ...string) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("reproduce: table %s: row has %d cells, want %d", t.Name, len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// Markdown renders the table, its notes and verdict as Markdown.
func (t *Table) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## %s\n\n", t.Title)
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("|")
	for _, c := range t.Columns {
		b.WriteString(" " + esc(c) + " |")
	}
	b.WriteString("\n|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	for _, f := range t.Figures {
		fmt.Fprintf(&b, "\n![%s](%s)\n", f, f)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if len(t.Verdict) > 0 {
		b.WriteString("\nVerdict (generated from the numbers above):\n")
		for _, v := range t.Verdict {
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	return b.Bytes()
}

// WriteCSV writes the header and rows as CSV.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// save writes dir/Name.md and dir/Name.csv atomically and returns their
// paths.
func (t *Table) save(dir string) ([]string, error) {
	md := filepath.Join(dir, t.Name+".md")
	if err := atomicfile.WriteFile(md, t.Markdown(), 0o644); err != nil {
		return nil, err
	}
	cp := filepath.Join(dir, t.Name+".csv")
	if err := atomicfile.Write(cp, 0o644, t.WriteCSV); err != nil {
		return nil, err
	}
	return []string{md, cp}, nil
}

// Number formatting used in every table.

func f4(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	if math.IsNaN(x) {
		return "nan"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

func f6(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// fUp and fDown format x to 4 significant digits rounded up and down: an
// upper bound is displayed no smaller than it is, a lower bound no larger.
func fUp(x float64) string   { return fDir(x, math.Ceil) }
func fDown(x float64) string { return fDir(x, math.Floor) }

func fDir(x float64, round func(float64) float64) string {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return f4(x)
	}
	e := math.Floor(math.Log10(math.Abs(x))) - 3
	p := math.Pow(10, e)
	return strconv.FormatFloat(round(x/p)*p, 'g', 4, 64)
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" }

// relDiff returns (ours − paper)/paper formatted as a signed percentage.
func relDiff(ours, paper float64) string {
	return fmt.Sprintf("%+.1f%%", 100*(ours-paper)/paper)
}
