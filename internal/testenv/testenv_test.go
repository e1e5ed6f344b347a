package testenv

import "testing"

func TestLong(t *testing.T) {
	for _, c := range []struct {
		val  string
		long bool
	}{{"", false}, {"1", true}, {"yes", true}, {"0", true}} {
		t.Setenv(LongEnv, c.val)
		if Long() != c.long {
			t.Errorf("%s=%q: Long() = %v, want %v", LongEnv, c.val, Long(), c.long)
		}
		if got, want := Size(3, 30), map[bool]int{false: 3, true: 30}[c.long]; got != want {
			t.Errorf("%s=%q: Size(3, 30) = %d, want %d", LongEnv, c.val, got, want)
		}
	}
	t.Setenv(LongEnv, "")
	skipped := false
	t.Run("skip", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		SkipUnlessLong(t, "testing the skip")
	})
	if !skipped {
		t.Error("SkipUnlessLong did not skip with DPCALC_LONG empty")
	}
}
