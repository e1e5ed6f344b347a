// Package plotting draws the line charts dpcalc writes (ε against epochs,
// σ against ε) with gonum.org/v1/plot, as PNG or SVG, written atomically.
package plotting

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
}

// Chart is a line chart with labelled axes and a legend.
type Chart struct {
	Title          string
	XLabel, YLabel string // include units, e.g. "epochs E", "ε (δ = 1e-5)"
	LogX, LogY     bool
	// LegendBottomRight puts the legend in the bottom-right corner (for
	// rising curves); the default is top-right (for falling ones).
	LegendBottomRight bool
	Series            []Series
}

// Format returns the image format for path's extension ("png" or "svg").
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("plotting: %s: unsupported extension %q, want .png or .svg", path, ext)
	}
}

// Render draws the chart in the given format ("png" or "svg") at 16×10 cm.
// Points with a non-finite or (on a log axis) non-positive coordinate are
// left out of the line.
func (c *Chart) Render(format string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top = !c.LegendBottomRight
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(6)
	if c.LegendBottomRight {
		p.Legend.YOffs = vg.Points(6)
	} else {
		p.Legend.YOffs = -vg.Points(6)
	}
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Add(plotter.NewGrid())
	xr, yr := newSpan(), newSpan()
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("plotting: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, 0, len(s.X))
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if !finite(x) || !finite(y) || (c.LogX && x <= 0) || (c.LogY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
			xr.add(x)
			yr.add(y)
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plotting: series %q: %w", s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	// gonum/plot widens an empty or zero-width range to [min−1, max+1],
	// which reaches 0 or below on a log axis and makes LogTicks panic; give
	// such axes a positive range ourselves.
	if c.LogX {
		p.X.Min, p.X.Max = xr.logRange()
	} else {
		p.X.Min, p.X.Max = xr.linRange()
	}
	if c.LogY {
		p.Y.Min, p.Y.Max = yr.logRange()
	} else {
		p.Y.Min, p.Y.Max = yr.linRange()
	}
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	w, err := p.WriterTo(16*vg.Centimeter, 10*vg.Centimeter, format)
	if err != nil {
		return nil, fmt.Errorf("plotting: %w", err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plotting: %w", err)
	}
	return buf.Bytes(), nil
}

// Save renders the chart in the format named by path's extension and writes
// it atomically (temp file, fsync, rename): the old file survives a crash.
func (c *Chart) Save(path string) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	b, err := c.Render(format)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o644)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// span is the range of the drawn coordinates on one axis.
type span struct{ lo, hi float64 }

func newSpan() span { return span{math.Inf(1), math.Inf(-1)} }

func (s *span) add(v float64) { s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v) }

// logRange returns a range with 0 < lo < hi for a log axis: the data range,
// [1, 10] without data, or a factor of 2 around a single value.
func (s span) logRange() (lo, hi float64) {
	switch {
	case s.lo > s.hi: // no data
		return 1, 10
	case s.lo < s.hi:
		return s.lo, s.hi
	}
	lo, hi = s.lo/2, s.hi*2
	if lo == 0 {
		lo = s.lo
	}
	if math.IsInf(hi, 0) {
		hi = s.hi
	}
	return lo, hi
}

// linRange returns a finite range with lo < hi for a linear axis: the data
// range, [0, 1] without data, or ±1 (or ±|v|/2 for large |v|) around a single
// value. A range wider than MaxFloat64 is shrunk so hi−lo stays finite.
func (s span) linRange() (lo, hi float64) {
	switch {
	case s.lo > s.hi:
		return 0, 1
	case s.lo == s.hi:
		d := math.Max(1, math.Abs(s.lo)/2)
		return s.lo - d, s.hi + d
	}
	lo, hi = s.lo, s.hi
	if math.IsInf(hi-lo, 0) {
		lo, hi = lo/2, hi/2
	}
	return lo, hi
}
