package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainMissingDataNamesFetch: `train --dataset mnist` without the data
// exits 2 and names the command that fetches it, with the data set filled
// in (it used to say `dpcalc data fetch NAME`).
func TestTrainMissingDataNamesFetch(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("DPCALC_DATA_DIR", empty)
	_, stderr, code := runCLI("train", "--dataset", "mnist", "--epochs", "1", "--eps", "1")
	want := "download it with `dpcalc data fetch mnist`"
	if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "NAME") || !strings.Contains(stderr, filepath.Join(empty, "mnist")) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming %s and %q", code, stderr, filepath.Join(empty, "mnist"), want)
	}
}
