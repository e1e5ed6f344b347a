package pld

import (
	"runtime"
	"testing"
)

// A plan returned is reused after garbage collections: a sync.Pool loses
// it at the second, and a σ search, which collects often, rebuilt its
// plans about 70 times. The store stays within maxPlanLength points.
func TestFFTPlansSurviveGC(t *testing.T) {
	f := getFFT(1000)
	putFFT(f)
	runtime.GC()
	runtime.GC()
	if g := getFFT(1000); g != f {
		t.Error("the plan of length 1000 was rebuilt after two collections")
	} else {
		putFFT(g)
	}
	for n := 1 << 18; n < 1<<18+40; n++ {
		putFFT(getFFT(n))
	}
	fftPlans.Lock()
	total, sum := fftPlans.total, 0
	for n, l := range fftPlans.free {
		sum += n * len(l)
	}
	fftPlans.Unlock()
	if total > maxPlanLength || sum != total {
		t.Errorf("plans kept: %d points (counted %d), want at most %d", total, sum, maxPlanLength)
	}
}
