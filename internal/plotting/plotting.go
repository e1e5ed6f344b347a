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
