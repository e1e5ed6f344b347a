package pld

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/internal/sysmem"
)

// TestMemoryRefusal: a composition whose arrays would not fit in the
// available memory is refused before it allocates them, with one line
// naming what to reduce (it used to run until the kernel killed it:
// 10,000 distinct phases took 11 GB). Not parallel: it replaces
// sysmem.Available.
func TestMemoryRefusal(t *testing.T) {
	old := sysmem.Available
	defer func() { sysmem.Available = old }()
	sysmem.Available = func() (uint64, bool) { return 1 << 20, true } // 1 MiB
	floor := sysmem.Floor
	sysmem.Floor = 0
	defer func() { sysmem.Floor = floor }()
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(accounting.SubsampledGaussian(1, 0.01, 10000), 1); err != nil {
		t.Fatal(err)
	}
	_, _, err = a.EpsilonBounds(context.Background(), 1e-5)
	var me *sysmem.Error
	if !errors.As(err, &me) {
		t.Fatalf("with 1 MiB available: err %v, want a *sysmem.Error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "needs about") || !strings.Contains(msg, "--accountant rdp") || me.Need <= 1<<20 {
		t.Errorf("message %q (need %g)", msg, me.Need)
	}
	// With the memory back, the same accountant answers.
	sysmem.Available = old
	lo, up, err := a.EpsilonBounds(context.Background(), 1e-5)
	if err != nil || !(lo > 0 && up >= lo) {
		t.Errorf("after the refusal: [%g, %g], %v", lo, up, err)
	}
}
