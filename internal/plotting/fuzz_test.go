package plotting

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderDegenerate draws the charts dpcalc produces when a curve is
// degenerate: every accountant failed (no series), a single point (one
// target ε), all points equal, or values at the ends of the float64 range.
// gonum/plot panics on a log axis whose range reaches 0 or below ("Values
// must be greater than 0 for a log scale"), which `dpcalc curve … --plot`
// used to hit.
func TestRenderDegenerate(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		series []Series
	}{
		{"no series", nil},
		{"all points undrawable", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{inf, -1}}}},
		{"single point at 1", []Series{{Name: "a", X: []float64{1}, Y: []float64{1}}}},
		{"single point below 1", []Series{{Name: "a", X: []float64{0.5}, Y: []float64{0.25}}}},
		{"constant y", []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{0.7, 0.7, 0.7}}}},
		{"largest float", []Series{{Name: "a", X: []float64{math.MaxFloat64}, Y: []float64{math.MaxFloat64}}}},
		{"smallest float", []Series{{Name: "a", X: []float64{math.SmallestNonzeroFloat64}, Y: []float64{math.SmallestNonzeroFloat64}}}},
		{"whole range", []Series{{Name: "a", X: []float64{math.SmallestNonzeroFloat64, math.MaxFloat64}, Y: []float64{math.MaxFloat64, math.SmallestNonzeroFloat64}}}},
	} {
		for _, logX := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				c := &Chart{Title: tc.name, LogX: logX, LogY: true, Series: tc.series}
				b, err := c.Render("svg")
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				if !bytes.Contains(b, []byte("<svg")) {
					t.Errorf("no <svg element")
				}
			})
		}
	}
}

// FuzzRender draws charts built from fuzzed coordinates (8 bytes per
// float64, little-endian) on every axis combination. Render must return an
// SVG or an error, never panic; Save must leave either a complete file or
// none, and no temporary file.
func FuzzRender(f *testing.F) {
	enc := func(xs ...float64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	f.Add(enc(1, 1, 2, 10, 3, 100), uint8(3), "ε")
	f.Add(enc(), uint8(3), "")
	f.Add(enc(1, 1), uint8(3), "one")
	f.Add(enc(0.5, 0.5), uint8(1), "")
	f.Add(enc(math.Inf(1), math.NaN(), -1, 0), uint8(2), "")
	f.Add(enc(math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1), uint8(0), "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte, axes uint8, name string) {
		if len(raw) > 8*64 {
			t.Skip("long series are not more interesting, only slower")
		}
		var s Series
		s.Name = name
		for i := 0; i+16 <= len(raw); i += 16 {
			s.X = append(s.X, math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])))
			s.Y = append(s.Y, math.Float64frombits(binary.LittleEndian.Uint64(raw[i+8:])))
		}
		c := &Chart{Title: name, XLabel: name, YLabel: "y", LogX: axes&1 != 0, LogY: axes&2 != 0, Series: []Series{s}}
		if axes&4 != 0 { // a second, shorter series
			c.Series = append(c.Series, Series{Name: "b", X: s.X[:len(s.X)/2], Y: s.Y[:len(s.Y)/2]})
		}
		b, err := c.Render("svg")
		if err == nil && !bytes.Contains(b, []byte("<svg")) {
			t.Fatalf("Render returned no SVG and no error")
		}
		if axes&8 != 0 {
			p := filepath.Join(dir, "f.svg")
			if err := c.Save(p); err != nil && !strings.HasPrefix(err.Error(), "plotting: ") && !strings.HasPrefix(err.Error(), "atomicfile: ") {
				t.Fatalf("Save: %v", err)
			}
			ents, _ := filepath.Glob(filepath.Join(dir, ".f.svg.tmp-*"))
			if len(ents) > 0 {
				t.Fatalf("Save left temporary files %v", ents)
			}
		}
	})
}
