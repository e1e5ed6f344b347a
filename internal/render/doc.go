package render

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
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

// writeTable prints t with headers as given (tablewriter's default
// upper-cases them, which turns σ into Σ) and rows unwrapped.
func writeTable(w io.Writer, t *Table) error {
	tb := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	tb.Header(anys(t.Header)...)
	for _, r := range t.Rows {
		if err := tb.Append(anys(r.Cells)...); err != nil {
			return err
		}
	}
	return tb.Render()
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
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
