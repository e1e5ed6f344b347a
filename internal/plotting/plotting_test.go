package plotting

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestSave(t *testing.T) {
	c := &Chart{
		Title: "test", XLabel: "epochs", YLabel: "ε", LogY: true,
		Series: []Series{
			{Name: "a", X: []float64{1, 2, 3}, Y: []float64{1, 10, 100}},
			{Name: "b", X: []float64{1, 2, 3}, Y: []float64{math.Inf(1), -1, 5}}, // only (3, 5) is drawable
		},
	}
	dir := t.TempDir()
	png := filepath.Join(dir, "c.png")
	svg := filepath.Join(dir, "c.svg")
	if err := c.Save(png); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(svg); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(png)
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("PNG file does not start with the PNG signature")
	}
	s, _ := os.ReadFile(svg)
	if !bytes.Contains(s, []byte("<svg")) {
		t.Errorf("SVG file has no <svg element")
	}
	if err := c.Save(filepath.Join(dir, "c.gif")); err == nil {
		t.Error("unsupported extension accepted")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in dir, want 2 (no temp files left)", len(entries))
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range logTicks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0.1, 10, "[0.1 0.2 0.5 1 2 5 10]"},           // σ–ε x axis: was only 1 and 10
		{0.9, 350, "[1 3 10 30 100 300]"},             // σ axis over 2.6 decades
		{0.05, 60, "[0.1 0.3 1 3 10 30]"},             // Abadi Fig. 2 ε axis
		{1e-3, 1e3, "[0.001 0.01 0.1 1 10 100 1000]"}, // wide: decades only
		{1.1, 1.9, "[1.2 1.4 1.6 1.8]"},               // inside one decade: linear ticks
	}
	for _, tt := range tests {
		if got := fmt.Sprint(labels(tt.lo, tt.hi)); got != tt.want {
			t.Errorf("logTicks(%g, %g) labels %s, want %s", tt.lo, tt.hi, got, tt.want)
		}
	}
	if got := logTicks(0, 10); got != nil {
		t.Errorf("logTicks(0, 10) = %v, want nil", got)
	}
}

// TestMarkedAndMargin: published points are drawn (the SVG has one marker
// element per point and a legend entry) and nothing is drawn in the blank
// margin at the top edge.
func TestMarkedAndMargin(t *testing.T) {
	c := &Chart{
		Title: "σ vs ε", XLabel: "ε", YLabel: "σ", LogX: true, LogY: true,
		Series: []Series{{Name: "rdp", X: []float64{0.1, 1, 10}, Y: []float64{40, 5, 1}}},
		Marked: []Series{{Name: "paper σ", X: []float64{0.5, 1}, Y: []float64{20, 8}}},
	}
	svg, err := c.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("paper σ")) {
		t.Error("no legend entry for the marked points")
	}
	png, err := c.Render("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := pngDecode(png)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	rows := b.Dy() * margin / 283 // 10 cm = 283 pt: the margin in pixels
	for y := b.Min.Y; y < b.Min.Y+rows; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
				t.Fatalf("pixel (%d, %d) in the top margin is not white: the title touches the edge", x, y)
			}
		}
	}
}

func pngDecode(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }

// TestLongYLabelKeepsDataArea: a long y label on a log axis does not
// shrink the data area (gonum/plot centres its own label at the arithmetic
// mean of a log range, which pushed the curves into the lower half).
func TestLongYLabelKeepsDataArea(t *testing.T) {
	c := &Chart{
		Title: "σ vs ε", XLabel: "target ε", YLabel: "noise multiplier σ (noise std / sensitivity), add/remove", LogX: true, LogY: true,
		Series: []Series{{Name: "rdp", X: []float64{0.1, 1, 10}, Y: []float64{700, 5, 0.9}}},
	}
	b, err := c.Render("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := pngDecode(b)
	if err != nil {
		t.Fatal(err)
	}
	bd := img.Bounds()
	top := -1
	for y := bd.Min.Y; y < bd.Max.Y && top < 0; y++ {
		for x := bd.Min.X; x < bd.Min.X+bd.Dx()*3/10; x++ { // left part: the curve's start, not the legend
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0xc000 && g < 0x9000 && bl < 0x9000 { // the first series' red
				top = y
				break
			}
		}
	}
	if top < 0 || top > bd.Dy()/5 {
		t.Errorf("the curve's highest point is at row %d of %d, want within the top fifth", top, bd.Dy())
	}
}

func TestLinTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{1, 400, "[100 200 300 400]"},
		{0, 1, "[0 0.2 0.4 0.6 0.8 1]"},
		{1, 10, "[2 4 6 8 10]"},
		{-3, 3, "[-3 -2 -1 0 1 2 3]"},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range linTicks(tt.lo, tt.hi) {
			got = append(got, tk.Label)
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("linTicks(%g, %g) = %v, want %s", tt.lo, tt.hi, got, tt.want)
		}
	}
}
