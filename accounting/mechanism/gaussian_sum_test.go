package mechanism

import (
	"context"
	"testing"
)

// TestSumStatTinySigma: at σ near its floor the thresholds are about
// 1e149 standard deviations out, where a scan stepping by adding 1/4
// never advanced (the query hung). The bound is then 0 or certified.
func TestSumStatTinySigma(t *testing.T) {
	s, ok := newSumStatistic(1.3e-150, 0.01, 1000)
	if !ok {
		t.Fatal("no sum statistic")
	}
	e, err := s.EpsilonLower(context.Background(), 1e-5)
	if err != nil || e < 0 {
		t.Errorf("ε lower %g, %v", e, err)
	}
	d, err := s.DeltaLower(context.Background(), 1)
	if err != nil || d < 0 || d > 1 {
		t.Errorf("δ lower %g, %v", d, err)
	}
}
