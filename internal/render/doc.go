package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Doc is a result as people read it: lines of text and tables, in order,
// every number already formatted. [Text] prints it; the web page shows the
// same blocks.
type Doc []Block

// Block is a line of text (Table nil) or a table.
type Block struct {
	Text  string `json:"text,omitempty"`
	Table *Table `json:"table,omitempty"`
}

// Table is a header and rows of cells.
type Table struct {
	Header []string `json:"header"`
	Rows   []Row    `json:"rows"`
}

// Row is one row of cells. Class says what kind of row it is for the web
// page's styling ("failed", "unsupported", "procedure" or ""); Key names
// what the row is about (an accountant). Neither is printed.
type Row struct {
	Cells []string `json:"cells"`
	Class string   `json:"class,omitempty"`
	Key   string   `json:"key,omitempty"`
}

// Line appends a line of text.
func (d *Doc) Line(format string, args ...any) {
	*d = append(*d, Block{Text: fmt.Sprintf(format, args...)})
}

// Table appends a table with the given header and returns it for its rows.
func (d *Doc) Table(header ...string) *Table {
	t := &Table{Header: header, Rows: []Row{}}
	*d = append(*d, Block{Table: t})
	return t
}

// Append adds a row of cells.
func (t *Table) Append(cells ...string) *Row {
	t.Rows = append(t.Rows, Row{Cells: cells})
	return &t.Rows[len(t.Rows)-1]
}

// Text prints d: each line of text on its own, each table boxed.
func Text(w io.Writer, d Doc) error {
	for _, b := range d {
		if b.Table == nil {
			if _, err := fmt.Fprintln(w, b.Text); err != nil {
				return err
			}
			continue
		}
		if err := writeTable(w, b.Table); err != nil {
			return err
		}
	}
	return nil
}

// writeTable prints t boxed with Unicode lines, as dpcalc always has (the
// layout of github.com/olekukonko/tablewriter's default, which this
// replaces so that the web page's engine does not carry it): one space of
// padding each side, headers centred, cells left-aligned and trimmed of
// surrounding space, a cell with line breaks on several lines. Widths are
// display widths (wide East Asian characters count two, combining marks
// none), the same in every locale.
func writeTable(w io.Writer, t *Table) error {
	n := len(t.Header)
	for _, r := range t.Rows {
		n = max(n, len(r.Cells))
	}
	lines := func(cells []string) [][]string {
		out := make([][]string, n)
		for i := range out {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			for _, l := range strings.Split(strings.TrimSpace(c), "\n") {
				out[i] = append(out[i], strings.TrimSpace(l))
			}
		}
		return out
	}
	header := lines(t.Header)
	rows := make([][][]string, len(t.Rows))
	widths := make([]int, n)
	for i, r := range t.Rows {
		rows[i] = lines(r.Cells)
	}
	for _, cells := range append([][][]string{header}, rows...) {
		for i, c := range cells {
			for _, l := range c {
				widths[i] = max(widths[i], Width(l))
			}
		}
	}
	var b strings.Builder
	rule := func(left, mid, right string) {
		b.WriteString(left)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(right + "\n")
	}
	row := func(cells [][]string, centre bool) {
		height := 1
		for _, c := range cells {
			height = max(height, len(c))
		}
		for k := 0; k < height; k++ {
			b.WriteString("│")
			for i, c := range cells {
				l := ""
				if k < len(c) {
					l = c[k]
				}
				gap := widths[i] - Width(l)
				left := 0
				if centre {
					left = gap / 2
				}
				b.WriteString(" " + strings.Repeat(" ", left) + l + strings.Repeat(" ", gap-left) + " │")
			}
			b.WriteString("\n")
		}
	}
	rule("┌", "┬", "┐")
	row(header, true)
	if len(rows) > 0 {
		rule("├", "┼", "┤")
	}
	for _, r := range rows {
		row(r, false)
	}
	rule("└", "┴", "┘")
	_, err := io.WriteString(w, b.String())
	return err
}

// Width is the display width of s in a terminal: wide East Asian
// characters count two columns, combining marks and zero-width characters
// none, every other character one.
func Width(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r == 0x200B:
		case wide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

// wide reports whether r is an East Asian wide or fullwidth character
// (Unicode's EastAsianWidth W or F), or an emoji shown wide.
func wide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115F, r == 0x2329, r == 0x232A,
		r >= 0x231A && r <= 0x231B, r >= 0x23E9 && r <= 0x23EC, r == 0x23F0, r == 0x23F3,
		r >= 0x25FD && r <= 0x25FE, r >= 0x2614 && r <= 0x2615, r >= 0x2648 && r <= 0x2653,
		r >= 0x2E80 && r <= 0x303E, r >= 0x3041 && r <= 0x33FF, r >= 0x3400 && r <= 0x4DBF,
		r >= 0x4E00 && r <= 0x9FFF, r >= 0xA000 && r <= 0xA4CF, r >= 0xA960 && r <= 0xA97F,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE10 && r <= 0xFE19,
		r >= 0xFE30 && r <= 0xFE6F, r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F, r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
		return true
	}
	return false
}

// CSV prints records as CSV.
func CSV(w io.Writer, records [][]string) error {
	cw := csv.NewWriter(w)
	for _, r := range records {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
