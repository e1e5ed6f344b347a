package cli

import "testing"

// TestParseEpsRange checks the two forms of --eps-range.
func TestParseEpsRange(t *testing.T) {
	got, err := ParseEpsRange("0:2", 5)
	if err != nil || len(got) != 5 || got[0] != 0 || got[2] != 1 || got[4] != 2 {
		t.Errorf("0:2 in 5: %v, %v", got, err)
	}
	got, err = ParseEpsRange("0.5, 3", 5)
	if err != nil || len(got) != 2 || got[1] != 3 {
		t.Errorf("list: %v, %v", got, err)
	}
}
