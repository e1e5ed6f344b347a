package atomicfile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// writeCalls are the standard-library calls that create or overwrite files.
var writeCalls = map[string]bool{
	"os.Create": true, "os.WriteFile": true, "os.OpenFile": true, "os.CreateTemp": true,
	"os.Rename": true, "ioutil.WriteFile": true, "ioutil.TempFile": true,
}

// allowedWrites lists, per file (slash path from the module root), the
// write calls that are known and why they are acceptable. Everything else
// that writes a file must go through this package.
var allowedWrites = map[string]string{
	"internal/atomicfile/atomicfile.go": "the atomic writer itself",
	"trainer/data/fetch.go": "a resumable download keeps a .part file across runs (os.OpenFile with " +
		"O_APPEND) and publishes it with atomicfile.Publish after verifying its SHA-256",
	"trainer/gemm/gen_kernels.go": "go:generate program writing kernel_amd64.s at development time",
	"trainer/lock_unix.go": "the lock file of a run's outputs (OpenFile + flock); it holds only the holder's pid, " +
		"for the error message of a run that finds the lock held, and is never read as data",
	"trainer/lock_other.go": "the O_EXCL lock file of a run's outputs (non-unix fallback); it holds only the holder's pid",
	// The next two are complete atomic writers of their own (CreateTemp in
	// the destination's directory, fsync, rename, directory fsync), copies of
	// this package's protocol: TestKillDuringCheckpointWrite and
	// TestKillDuringLedgerWrite check them. They differ only in leaving the
	// file mode at CreateTemp's 0600. Reported to their owners: use
	// atomicfile.WriteFile.
	"trainer/checkpoint.go": "own copy of the atomic protocol (writeFileAtomic); see the kill test",
	"accounting/ledger.go":  "own copy of the atomic protocol (writeFileAtomic); see the kill test",
}

// TestAllFileWritesAreAtomic parses every non-test Go file of the module and
// fails on any call that creates or overwrites a file outside allowedWrites:
// every file the project writes (plots, checkpoints, ledgers, --log-json,
// downloads) must be replaced atomically, so a killed process never leaves
// a half-written file.
func TestAllFileWritesAreAtomic(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("module root not found at %s", root)
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			if writeCalls[name] {
				found[rel] = append(found[rel], name+" at line "+strconv.Itoa(fset.Position(call.Pos()).Line))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(found))
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if why, ok := allowedWrites[f]; ok {
			t.Logf("%s: %s (allowed: %s)", f, strings.Join(found[f], ", "), why)
			continue
		}
		t.Errorf("%s writes files without internal/atomicfile: %s", f, strings.Join(found[f], ", "))
	}
}
