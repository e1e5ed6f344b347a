package data

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadMNIST(t *testing.T) {
	dir := filepath.Join(sharedDataDir(t), "mnist")
	train, test, err := Load("mnist", dir)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, train, "mnist/train", 60000, 784)
	checkShape(t, test, "mnist/test", 10000, 784)
	// Label counts from shared/data/README.md.
	wantTrain := []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}
	wantTest := []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	if got := train.ClassCounts(); !equalInts(got, wantTrain) {
		t.Errorf("train counts = %v, want %v", got, wantTrain)
	}
	if got := test.ClassCounts(); !equalInts(got, wantTest) {
		t.Errorf("test counts = %v, want %v", got, wantTest)
	}
	// Known values (from `zcat FILE | od -v`): train[0] is a 5, test[0] a 7;
	// train[0] pixels (row 5, col 21) = 255, (5, 22) = 247, (6, 18) = 225;
	// test[0] pixels (8, 6) = 222, (8, 7) = 254, (8, 11) = 241.
	if train.Y[0] != 5 || test.Y[0] != 7 || train.Y[4] != 9 || test.Y[4] != 4 {
		t.Errorf("labels train[0,4]=%d,%d test[0,4]=%d,%d, want 5,9 and 7,4", train.Y[0], train.Y[4], test.Y[0], test.Y[4])
	}
	for _, c := range []struct {
		d             *Dataset
		i, r, col, px int
	}{
		{train, 0, 5, 21, 255}, {train, 0, 5, 22, 247}, {train, 0, 6, 18, 225}, {train, 0, 0, 0, 0},
		{test, 0, 8, 6, 222}, {test, 0, 8, 7, 254}, {test, 0, 8, 11, 241},
	} {
		if got, want := c.d.Row(c.i)[c.r*28+c.col], float32(c.px)/255; got != want {
			t.Errorf("%s[%d] pixel (%d,%d) = %g, want %d/255", c.d.Name, c.i, c.r, c.col, got, c.px)
		}
	}
	var sum float64
	for _, v := range train.Row(59999) {
		sum += float64(v) * 255
	}
	if int(sum+0.5) != 20920 {
		t.Errorf("sum of train[59999] pixels = %g, want 20920", sum)
	}
}

func TestLoadFashionMNIST(t *testing.T) {
	dir := DebianFashionMNISTDir
	if env := os.Getenv(DataDirEnv); env != "" && isDir(filepath.Join(env, "fashion-mnist")) {
		dir = filepath.Join(env, "fashion-mnist")
	}
	if !isDir(dir) {
		t.Skipf("Fashion-MNIST not installed in %s (apt-get install dataset-fashion-mnist)", dir)
	}
	train, test, err := Load("fashion-mnist", dir)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, train, "fashion-mnist/train", 60000, 784)
	checkShape(t, test, "fashion-mnist/test", 10000, 784)
	for k, c := range train.ClassCounts() {
		if c != 6000 {
			t.Errorf("train class %d: %d, want 6000", k, c)
		}
	}
	for k, c := range test.ClassCounts() {
		if c != 1000 {
			t.Errorf("test class %d: %d, want 1000", k, c)
		}
	}
	// Upstream README: the first training label is 9 (ankle boot).
	if train.Y[0] != 9 {
		t.Errorf("train.Y[0] = %d, want 9", train.Y[0])
	}
}

func checkShape(t *testing.T, d *Dataset, name string, n, dim int) {
	t.Helper()
	if d.Name != name || d.N != n || d.D != dim || d.Classes != 10 || len(d.X) != n*dim || len(d.Y) != n {
		t.Fatalf("%s: Name=%q N=%d D=%d Classes=%d len(X)=%d len(Y)=%d", name, d.Name, d.N, d.D, d.Classes, len(d.X), len(d.Y))
	}
	for i, v := range d.X {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("%s: X[%d] = %g not in [0,1]", name, i, v)
		}
	}
}

// TestLoadDirErrors runs the public Load on directories built from the real
// MNIST files with one file replaced, so the verification order is the one
// users hit.
func TestLoadDirErrors(t *testing.T) {
	src := filepath.Join(sharedDataDir(t), "mnist")
	realLabels, err := readIdx(filepath.Join(src, "t10k-labels-idx1-ubyte.gz"), mnistSpec.Test[1])
	if err != nil {
		t.Fatal(err)
	}
	mk := func(t *testing.T, replace string, content []byte) string {
		dir := t.TempDir()
		for _, f := range mnistSpec.files() {
			if f.Base == replace {
				if content != nil {
					writeFile(t, dir, f.Base, content) // raw, no .gz suffix
				}
				continue
			}
			if err := os.Symlink(filepath.Join(src, f.Base+".gz"), filepath.Join(dir, f.Base+".gz")); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	relabelled := bytes.Clone(realLabels)
	relabelled[0] = 3 // a valid label, so only the checksum can catch it
	for _, tc := range []struct {
		name, file string
		content    []byte
		want       string
	}{
		{"raw uncompressed copy is accepted", "t10k-labels-idx1-ubyte", idxBytes(idxLabels, 10000, 0, 0, realLabels), ""},
		{"missing file", "t10k-labels-idx1-ubyte", nil, "is missing from " /* the rest: TestMissingNamesFetch */},
		{"changed label", "t10k-labels-idx1-ubyte", idxBytes(idxLabels, 10000, 0, 0, relabelled), "t10k-labels-idx1-ubyte: sha-256 of decompressed content is"},
		{"wrong count", "train-labels-idx1-ubyte", idxBytes(idxLabels, 10000, 0, 0, realLabels), "train-labels-idx1-ubyte: header says 10000 items, want 60000"},
		{"labels as images", "t10k-images-idx3-ubyte", idxBytes(idxLabels, 10000, 0, 0, realLabels), "t10k-images-idx3-ubyte: idx magic 0x00000801, want 0x00000803"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			train, test, err := Load("mnist", mk(t, tc.file, tc.content))
			if tc.want == "" {
				if err != nil || test.Y[0] != 7 || train.N != 60000 {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "data: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want …%s…", err, tc.want)
			}
			if train != nil || test != nil {
				t.Error("data returned alongside an error")
			}
		})
	}
}

// TestMissingNamesFetch: a missing data set's error names every absent file
// and the exact command that fetches it (`dpcalc data fetch mnist`, with
// --dir for a directory other than the default), both from Load and from
// the stat-only Missing.
func TestMissingNamesFetch(t *testing.T) {
	root := t.TempDir()
	t.Setenv(DataDirEnv, root)
	other := t.TempDir()
	all := "train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz"
	for _, tc := range []struct{ dir, want string }{
		{"", "data: mnist is missing from " + filepath.Join(root, "mnist") + ": " + all + " (or the same without .gz); download it with `dpcalc data fetch mnist`"},
		{other, "data: mnist is missing from " + other + ": " + all + " (or the same without .gz); download it with `dpcalc data fetch mnist --dir " + other + "`"},
	} {
		train, _, err := Load("mnist", tc.dir)
		if err == nil || err.Error() != tc.want || train != nil {
			t.Errorf("Load(mnist, %q): %v\nwant %s", tc.dir, err, tc.want)
		}
		if err := Missing("mnist", tc.dir); err == nil || err.Error() != tc.want {
			t.Errorf("Missing(mnist, %q): %v\nwant %s", tc.dir, err, tc.want)
		}
	}
	// One file present: only the other three are named.
	writeFile(t, other, "t10k-labels-idx1-ubyte", []byte("x"))
	if err := Missing("mnist", other); err == nil || strings.Contains(err.Error(), "t10k-labels") || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte.gz") {
		t.Errorf("Missing with one file present: %v", err)
	}
	if err := Missing("digits", ""); err != nil {
		t.Errorf("Missing(digits) = %v, want nil (embedded)", err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(DataDirEnv, "/x/data")
	if got := DefaultDir("mnist"); got != "/x/data/mnist" {
		t.Errorf("DefaultDir(mnist) = %q", got)
	}
	if got := DefaultDir("digits"); got != "" {
		t.Errorf("DefaultDir(digits) = %q, want \"\"", got)
	}
	wantFashion := "/x/data/fashion-mnist"
	if isDir(DebianFashionMNISTDir) {
		wantFashion = DebianFashionMNISTDir // /x/data/fashion-mnist does not exist
	}
	if got := DefaultDir("fashion-mnist"); got != wantFashion {
		t.Errorf("DefaultDir(fashion-mnist) = %q, want %q", got, wantFashion)
	}
	tmp := t.TempDir()
	os.Mkdir(filepath.Join(tmp, "fashion-mnist"), 0o755)
	t.Setenv(DataDirEnv, tmp)
	if got := DefaultDir("fashion-mnist"); got != filepath.Join(tmp, "fashion-mnist") {
		t.Errorf("DefaultDir(fashion-mnist) with existing env dir = %q", got)
	}
	t.Setenv(DataDirEnv, "")
	if got := DefaultDir("fashion-mnist"); got != DebianFashionMNISTDir {
		t.Errorf("DefaultDir(fashion-mnist) = %q, want %q", got, DebianFashionMNISTDir)
	}
	if got := DefaultDir("mnist"); !strings.HasSuffix(got, filepath.Join("dpcalc", "mnist")) {
		t.Errorf("DefaultDir(mnist) = %q, want …/dpcalc/mnist", got)
	}
}

func BenchmarkLoadMNIST(b *testing.B) {
	dir := filepath.Join(sharedDataDir(b), "mnist")
	for b.Loop() {
		if _, _, err := Load("mnist", dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInflateMNIST is the reference for BenchmarkLoadMNIST: bare gzip
// decompression of the same four files, no parsing or hashing.
func BenchmarkInflateMNIST(b *testing.B) {
	dir := filepath.Join(sharedDataDir(b), "mnist")
	names := []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}
	for b.Loop() {
		for _, n := range names {
			f, err := os.Open(filepath.Join(dir, n))
			if err != nil {
				b.Fatal(err)
			}
			zr, err := gzip.NewReader(f)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, zr); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
}
