// Package data loads the trainer's datasets (DIGITS, MNIST, Fashion-MNIST),
// verifies them against published checksums, and fetches missing files.
package data

// Dataset is a labelled classification set held in memory.
type Dataset struct {
	Name    string    // "digits", "mnist", "fashion-mnist", plus a split suffix such as "/train"
	X       []float32 // N×D row-major features, scaled to [0, 1]
	Y       []uint8   // N labels in [0, Classes)
	N       int       // number of examples
	D       int       // features per example
	Classes int       // number of classes
}

// Row returns example i's features (a view, not a copy).
func (d *Dataset) Row(i int) []float32 { return d.X[i*d.D : (i+1)*d.D] }
