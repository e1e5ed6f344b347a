package registry

import (
	"errors"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestNewEventsRefused: until a method bounds them, Laplace, fixed-size and
// shuffled steps are an *UnsupportedEventError naming the path, never a
// guess, and the method is unchanged.
func TestNewEventsRefused(t *testing.T) {
	g := accounting.Gaussian{NoiseMultiplier: 2}
	for _, e := range []struct {
		ev   accounting.Event
		path string
	}{
		{accounting.Laplace{NoiseMultiplier: 1}, "Laplace"},
		{accounting.PoissonSampled{SamplingRate: 0.1, Event: accounting.Laplace{NoiseMultiplier: 1}}, "PoissonSampled/Laplace"},
		{accounting.Shuffled{DatasetSize: 100, BatchSize: 10, Event: g}, "Shuffled/Gaussian"},
	} {
		for _, k := range accounting.Kinds {
			m, err := New(k, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Compose(e.ev, 3)
			var ue *accounting.UnsupportedEventError
			if !errors.As(err, &ue) || ue.Path != e.path {
				t.Errorf("%s: Compose(%#v) = %v, want *UnsupportedEventError at %q", k, e.ev, err, e.path)
			}
			if eps, err := m.Epsilon(t.Context(), 1e-5); err != nil || eps != 0 {
				t.Errorf("%s: after a refused Compose ε = %v, %v; want 0 (unchanged)", k, eps, err)
			}
		}
	}
}
