// Package plotting draws the line charts dpcalc writes (ε against epochs,
// σ against ε) with gonum.org/v1/plot, as PNG or SVG, written atomically.
package plotting

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
}

// Chart is a line chart with labelled axes and a legend.
type Chart struct {
	Title          string
	XLabel, YLabel string // include units and, for σ, its scale
	LogX, LogY     bool
	// LegendBottomRight puts the legend in the bottom-right corner (for
	// rising curves); the default is top-right (for falling ones).
	LegendBottomRight bool
	Series            []Series
	// Marked are published values, drawn as unconnected markers (one shape
	// per set) with their own legend entries.
	Marked []Series
}

// margin is the blank border around the whole chart, so that the title and
// the outermost tick labels do not touch the image edge.
const margin = 8 // points

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
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = c.XLabel
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
		p.X.Tick.Marker = plot.TickerFunc(logTicks)
	} else {
		p.X.Tick.Marker = plot.TickerFunc(linTicks)
	}
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.TickerFunc(logTicks)
	} else {
		p.Y.Tick.Marker = plot.TickerFunc(linTicks)
	}
	p.Add(plotter.NewGrid())
	xr, yr := newSpan(), newSpan()
	for i, s := range c.Series {
		pts, err := c.drawable("series", s.Name, s.X, s.Y, &xr, &yr)
		if err != nil {
			return nil, err
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
	for i, m := range c.Marked {
		pts, err := c.drawable("marked set", m.Name, m.X, m.Y, &xr, &yr)
		if err != nil {
			return nil, err
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plotting: marked set %q: %w", m.Name, err)
		}
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(3.5)
		sc.GlyphStyle.Color = color.Black
		p.Add(sc)
		p.Legend.Add(m.Name, sc)
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
	cv, err := draw.NewFormattedCanvas(16*vg.Centimeter, 10*vg.Centimeter, format)
	if err != nil {
		return nil, fmt.Errorf("plotting: %w", err)
	}
	m := vg.Points(margin)
	dc := draw.Crop(draw.New(cv), m, -m, m, -m)
	// The y label is drawn here rather than by gonum/plot, which centres it
	// at the arithmetic mean of the axis range: on a log axis that is near
	// the top, and a long label then shrinks the data area to a strip.
	if c.YLabel != "" {
		sty := p.Y.Label.TextStyle
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Min.X, Y: (dc.Min.Y + dc.Max.Y) / 2}, c.YLabel)
		dc = draw.Crop(dc, p.Y.Label.TextStyle.Height(c.YLabel)+p.Y.Label.Padding, 0, 0, 0)
	}
	p.Draw(dc)
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
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

// logTicks labels a log axis at 1, 2 and 5 times each power of ten when the
// range spans at most two decades, at 1 and 3 times for up to four, and at
// the powers of ten beyond that, with unlabelled minor ticks at every
// integer multiple (gonum's LogTicks labels only powers of ten, which leaves
// an axis from 0.1 to 10 with three labels).
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	decades := math.Log10(hi / lo)
	var labelled []float64
	switch {
	case decades <= 2:
		labelled = []float64{1, 2, 5}
	case decades <= 4:
		labelled = []float64{1, 3}
	default:
		labelled = []float64{1}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for k := 1.0; k <= 9; k++ {
			v := k * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			for _, l := range labelled {
				if k == l {
					t.Label = tickLabel(v)
				}
			}
			ticks = append(ticks, t)
		}
	}
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	if n < 2 { // a range inside one decade: label every multiple, or fall back to linear ticks
		for i := range ticks {
			ticks[i].Label = tickLabel(ticks[i].Value)
		}
		if len(ticks) < 2 {
			return linTicks(lo, hi)
		}
	}
	return ticks
}

// linTicks labels a linear axis every 1, 2 or 5 times a power of ten,
// whichever gives 4 to 10 labels (gonum's DefaultTicks labels about three,
// e.g. 50, 200 and 350 on an axis from 1 to 400).
func linTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	raw := (hi - lo) / 6
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * pow
	for _, k := range []float64{1, 2, 5} {
		if k*pow >= raw {
			step = k * pow
			break
		}
	}
	first := math.Ceil(lo/step) * step
	if first+step == first || math.IsInf(first, 0) { // the step is below float64 resolution here
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}, {Value: hi, Label: tickLabel(hi)}}
	}
	var ticks []plot.Tick
	for k := 0; k <= 10; k++ {
		v := first + float64(k)*step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0 // not -1.1e-16
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v)})
	}
	return ticks
}

func tickLabel(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// drawable returns the points of (xs, ys) the chart's axes can show (finite,
// and positive on a log axis), widening the spans xr and yr to hold them;
// what names the data in the error for unequal lengths.
func (c *Chart) drawable(what, name string, xs, ys []float64, xr, yr *span) (plotter.XYs, error) {
	if len(xs) != len(ys) {
		return nil, fmt.Errorf("plotting: %s %q has %d x and %d y values", what, name, len(xs), len(ys))
	}
	pts := make(plotter.XYs, 0, len(xs))
	for j := range xs {
		x, y := xs[j], ys[j]
		if !finite(x) || !finite(y) || (c.LogX && x <= 0) || (c.LogY && y <= 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
		xr.add(x)
		yr.add(y)
	}
	return pts, nil
}
