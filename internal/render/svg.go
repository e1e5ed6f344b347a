package render

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The SVG plot's geometry: width and height, and the margins left, right
// (the legend), top and bottom, in pixels.
const (
	svgW, svgH             = 600, 360
	svgL, svgR, svgT, svgB = 60, 190, 30, 50
)

var svgColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"}

// SVG draws c as the web page shows it: each series as a polyline (class
// "series", data-accountant its Key, data-n its number of points), on
// log-scaled axes where c asks for them, with a legend; mark, if not nil,
// is circled when it lies in the plotted range. Points whose x or y is not
// finite and positive are left out. It returns "" when no point is left.
func SVG(c Chart, mark *[2]float64) string {
	type series struct {
		name, key string
		pts       [][2]float64
	}
	var ss []series
	var xs, ys []float64
	for _, s := range c.Series {
		var pts [][2]float64
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if x > 0 && y > 0 && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				pts = append(pts, [2]float64{x, y})
				xs, ys = append(xs, x), append(ys, y)
			}
		}
		if len(pts) > 0 {
			ss = append(ss, series{s.Name, s.Key, pts})
		}
	}
	if len(xs) == 0 {
		return ""
	}
	x0, x1 := minMax(xs)
	y0, y1 := minMax(ys)
	if y1 <= y0 {
		y0, y1 = y0/2, y1*2
	}
	if x1 <= x0 {
		x0, x1 = x0/2, x1*2
	}
	sx := func(x float64) float64 {
		if c.LogX {
			return svgL + (svgW-svgL-svgR)*math.Log(x/x0)/math.Log(x1/x0)
		}
		return svgL + (svgW-svgL-svgR)*(x-x0)/(x1-x0)
	}
	sy := func(y float64) float64 {
		if c.LogY {
			return svgT + (svgH-svgT-svgB)*(1-math.Log(y/y0)/math.Log(y1/y0))
		}
		return svgT + (svgH-svgT-svgB)*(1-(y-y0)/(y1-y0))
	}
	px := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="sans-serif">`, svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="16" text-anchor="middle" font-size="13">%s</text>`, svgW/2, esc(c.Title))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`, svgL, svgT, svgW-svgL-svgR, svgH-svgT-svgB)
	for _, v := range ticks(x0, x1, c.LogX) {
		x := px(sx(v))
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#eee"/><text x="%s" y="%d" text-anchor="middle">%s</text>`, x, x, svgT, svgH-svgB, x, svgH-svgB+14, G(v))
	}
	for _, v := range ticks(y0, y1, c.LogY) {
		y := sy(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#eee"/><text x="%d" y="%s" text-anchor="end">%s</text>`, svgL, svgW-svgR, px(y), px(y), svgL-4, px(y+4), G(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, (svgL+svgW-svgR)/2, svgH-12, esc(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`, (svgT+svgH-svgB)/2, esc(c.YLabel))
	for i, s := range ss {
		col := svgColors[i%len(svgColors)]
		pts := make([]string, len(s.pts))
		for j, p := range s.pts {
			pts[j] = px(sx(p[0])) + "," + px(sy(p[1]))
		}
		fmt.Fprintf(&b, `<polyline class="series" data-accountant="%s" data-n="%d" points="%s" fill="none" stroke="%s" stroke-width="1.6"/>`, esc(s.key), len(s.pts), strings.Join(pts, " "), col)
		ly := svgT + 10 + 15*i
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>`, svgW-svgR+8, svgW-svgR+24, ly, ly, col)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, svgW-svgR+28, ly+4, esc(s.name))
	}
	if m := mark; m != nil && m[0] > 0 && m[1] > 0 && m[0] >= x0 && m[0] <= x1 && m[1] >= y0 && m[1] <= y1 {
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="none" stroke="#000"/>`, px(sx(m[0])), px(sy(m[1])))
	}
	b.WriteString("</svg>")
	return b.String()
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// ticks are the axis marks of [lo, hi]: 1, 2 and 5 times the powers of ten
// on a log axis spanning less than two decades (else the powers of ten);
// about six round steps on a linear axis.
func ticks(lo, hi float64, log bool) []float64 {
	var out []float64
	if log {
		mult := []float64{1}
		if hi/lo < 100 {
			mult = []float64{1, 2, 5}
		}
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mult {
				v := m * math.Pow(10, e)
				if v >= lo*0.999 && v <= hi*1.001 {
					out = append(out, v)
				}
			}
		}
		return out
	}
	step0 := (hi - lo) / 6
	p := math.Pow(10, math.Floor(math.Log10(step0)))
	step := 10 * p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= step0 {
			step = m * p
			break
		}
	}
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9*step; v += step {
		out = append(out, v)
	}
	return out
}
