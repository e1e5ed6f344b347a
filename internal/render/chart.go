package render

// Chart is a plot of one or more series: what dpcalc curve --plot and
// dpcalc profile --plot draw to a file, and what the web page draws as SVG
// ([SVG]).
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// LegendBottomRight moves the legend out of the way of rising curves.
	LegendBottomRight bool
	Series            []Series
}

// Series is one named line. Key says what it is about (an accountant),
// for the web page; it is not drawn.
type Series struct {
	Name string
	Key  string
	X, Y []float64
}
