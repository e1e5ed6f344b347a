package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduceMarkdown: reproduce prints a summary, not the report, and
// --markdown writes the report with its figures beside it and links that
// resolve from the report's directory.
func TestReproduceMarkdown(t *testing.T) {
	if testing.Short() {
		t.Skip("trains DIGITS for a few seconds")
	}
	dir := t.TempDir()
	md := filepath.Join(dir, "docs", "repro.md")
	if err := os.MkdirAll(filepath.Dir(md), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI("reproduce", "--profile", "tiny", "--paper", "dpd", "--quiet", "--out", filepath.Join(dir, "out"), "--markdown", md)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "|---") || strings.Count(stdout, "\n") != 2 {
		t.Errorf("stdout is not a two-line summary:\n%s", stdout)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "![") {
			continue
		}
		links++
		target := l[strings.Index(l, "](")+2 : len(l)-1]
		if !strings.HasPrefix(target, "repro/") {
			t.Errorf("figure link %q does not point into repro/", target)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(md), filepath.FromSlash(target))); err != nil {
			t.Errorf("figure link %q does not resolve: %v", target, err)
		}
	}
	if links != 2 {
		t.Errorf("%d figure links, want 2 (dpd σ–ε for MNIST and DIGITS)", links)
	}
}
