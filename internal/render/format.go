// Package render turns dpcalc's results into what people read: tables and
// lines of text, CSV records, JSON, and the cells and plots of the web page.
// Every number the command line and the web page show is formatted here,
// so the page shows exactly what the command line prints.
//
// A result describes itself as a [Doc] (its lines and tables, each cell
// already formatted); [Text] prints a Doc as the command line does, and the
// web page shows the same cells. Numbers are formatted with six significant
// digits ([G]); an upper bound is rounded up ([Up]) and a lower bound down
// ([Down]), so that rounding never makes a privacy guarantee look better
// than it is.
package render

import (
	"math"
	"strconv"
	"strings"
)

// Digits is the number of significant digits of a table cell.
const Digits = 6

// G formats x with six significant digits, rounded to the nearest: for a
// value given as input or one that is not a bound (a count as a float, an
// epoch number).
func G(x float64) string { return strconv.FormatFloat(x, 'g', Digits, 64) }

// Up formats an upper bound v with six significant digits, rounded up, so
// the printed number is never below v.
func Up(v float64) string { return UpDigits(v, Digits) }

// Down formats a lower bound v with six significant digits, rounded down,
// so the printed number is never above v.
func Down(v float64) string { return DownDigits(v, Digits) }

// UpDigits is [Up] with the given number of significant digits.
func UpDigits(v float64, digits int) string { return round(v, digits, 1) }

// DownDigits is [Down] with the given number of significant digits.
func DownDigits(v float64, digits int) string { return round(v, digits, -1) }

// round formats v ≥ 0 with digits significant digits, rounded in the
// direction of dir (+1 up, -1 down). Zero, negative and non-finite values
// are formatted as strconv does.
func round(v float64, digits int, dir float64) string {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	if !(v > 0) || math.IsInf(v, 0) {
		return s
	}
	if f, _ := strconv.ParseFloat(s, 64); (dir > 0 && f < v) || (dir < 0 && f > v) {
		// Nearest went the wrong way: one unit in the last digit back.
		scale := math.Pow(10, math.Floor(math.Log10(v))-float64(digits-1))
		s = strconv.FormatFloat(f+dir*scale, 'g', digits, 64)
	}
	return s
}

// PctUp formats the fraction x as a percentage with three significant
// digits, rounded up (for an upper bound: a true-positive rate, an
// accuracy).
func PctUp(x float64) string { return UpDigits(100*x, 3) }

// Pct formats a rate given as input (exact) as a percentage.
func Pct(x float64) string { return strconv.FormatFloat(100*x, 'g', Digits, 64) }

// Ptr formats *p with f, or "-" for nil (no value: JSON null).
func Ptr(p *float64, f func(float64) string) string {
	if p == nil {
		return "-"
	}
	return f(*p)
}

// Inf is f(x), with +Inf printed as "unbounded".
func Inf(x float64, f func(float64) string) string {
	if math.IsInf(x, 1) {
		return "unbounded"
	}
	return f(x)
}

// Order formats a moment order λ: an integer as it is, any other order
// (the continuous search's, such as 0.272996…) to 4 significant digits;
// "-" for none.
func Order(p *float64) string {
	switch {
	case p == nil:
		return "-"
	case *p == math.Trunc(*p) && math.Abs(*p) < 1e6:
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	return strconv.FormatFloat(*p, 'g', 4, 64)
}

// Exact formats x with as many digits as it takes to read back the same
// float64 (the JSON number), as Go's %g does: 50.001920000000005.
func Exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// ArgDigits is [Arg] of x rounded to the nearest with the given number of
// significant digits (a range of a curve needs no more than three).
func ArgDigits(x float64, digits int) string {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	return Arg(v)
}

// Arg formats x as a command-line argument: [Exact], with the exponent
// written as one types it (1e-5, not 1e-05). It reads back as x.
func Arg(x float64) string {
	s := Exact(x)
	if i := strings.IndexAny(s, "e"); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := ""
		if exp[0] == '+' || exp[0] == '-' {
			sign, exp = exp[:1], exp[1:]
		}
		if sign == "+" {
			sign = ""
		}
		exp = strings.TrimLeft(exp, "0")
		s = mant + "e" + sign + exp
	}
	return s
}
