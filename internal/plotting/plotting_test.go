package plotting

import (
	"bytes"
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
