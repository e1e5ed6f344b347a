package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDigits(t *testing.T) {
	train, test, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    *Dataset
		name string
		n    int
	}{{train, "digits/train", DigitsTrainSize}, {test, "digits/test", DigitsTestSize}} {
		if c.d.Name != c.name || c.d.N != c.n || c.d.D != 64 || c.d.Classes != 10 || len(c.d.X) != c.n*64 || len(c.d.Y) != c.n {
			t.Errorf("%s: Name=%q N=%d D=%d Classes=%d len(X)=%d len(Y)=%d", c.name, c.d.Name, c.d.N, c.d.D, c.d.Classes, len(c.d.X), len(c.d.Y))
		}
		for i, v := range c.d.X {
			if v < 0 || v > 1 || v*16 != float32(int(v*16)) {
				t.Fatalf("%s: X[%d] = %g, want k/16 for k in 0..16", c.name, i, v)
			}
		}
	}
	if DigitsTrainSize+DigitsTestSize != 1797 {
		t.Errorf("split sizes %d+%d != 1797", DigitsTrainSize, DigitsTestSize)
	}
	// Class counts of the whole set, as in scikit-learn's load_digits.
	wantAll := []int{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}
	// Class counts of the fixed test split (regression pin of the seed and
	// shuffle procedure documented on Digits).
	wantTest := []int{45, 40, 28, 38, 27, 41, 38, 37, 32, 34}
	tr, te := train.ClassCounts(), test.ClassCounts()
	for k := range wantAll {
		if tr[k]+te[k] != wantAll[k] {
			t.Errorf("class %d: train %d + test %d != %d", k, tr[k], te[k], wantAll[k])
		}
	}
	if !equalInts(te, wantTest) {
		t.Errorf("test class counts = %v, want %v", te, wantTest)
	}
}

func TestDigitsFirstRowAndPermutation(t *testing.T) {
	perm := digitsPerm()
	// Pinned: a change here means the documented split changed.
	wantHead := []int{1273, 147, 172, 689, 1382}
	if !equalInts(perm[:5], wantHead) {
		t.Errorf("perm[:5] = %v, want %v", perm[:5], wantHead)
	}
	seen := make([]bool, len(perm))
	for _, p := range perm {
		if seen[p] {
			t.Fatalf("index %d repeated in permutation", p)
		}
		seen[p] = true
	}
	// Row 0 of the file is "0,0,5,13,9,1,0,0,0,0,13,15,10,15,5,0,…" with label 0.
	train, test, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	pos := -1
	for k, p := range perm {
		if p == 0 {
			pos = k
		}
	}
	d, k := test, pos
	if pos >= DigitsTestSize {
		d, k = train, pos-DigitsTestSize
	}
	row := d.Row(k)
	want := []float32{0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0}
	for i, w := range want {
		if row[i] != w/16 {
			t.Errorf("file row 0 pixel %d = %g, want %g", i, row[i], w/16)
		}
	}
	if d.Y[k] != 0 {
		t.Errorf("file row 0 label = %d, want 0", d.Y[k])
	}
	// Deterministic across calls, and fresh slices.
	train2, _, _ := Digits()
	if !equalF32(train.X, train2.X) || !bytes.Equal(train.Y, train2.Y) {
		t.Error("Digits is not deterministic")
	}
	train2.X[0] = 42
	if train.X[0] == 42 {
		t.Error("Digits returned shared slices")
	}
}

func TestParseDigitsCorrupt(t *testing.T) {
	flipped := bytes.Clone(digitsGz)
	flipped[len(flipped)/2] ^= 0xff
	other := gzipBytes(t, []byte(strings.Repeat("0,", 64)+"0\n"))
	for _, tc := range []struct {
		name, want string
		gz         []byte
	}{
		{"flipped byte", "corrupt gzip stream", flipped},
		{"truncated", "corrupt gzip stream", digitsGz[:len(digitsGz)/3]},
		{"different content", "sha-256 of decompressed content is", other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseDigits(tc.gz)
			if err == nil || !strings.Contains(err.Error(), "data: digits.csv.gz") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want data: digits.csv.gz …%s…", err, tc.want)
			}
		})
	}
}

func TestLoadDigits(t *testing.T) {
	train, test, err := Load("digits", "/nonexistent")
	if err != nil {
		t.Fatal(err)
	}
	if train.N != DigitsTrainSize || test.N != DigitsTestSize {
		t.Errorf("Load(digits) sizes %d/%d", train.N, test.N)
	}
	if _, _, err := Load("cifar", ""); err == nil || !strings.Contains(err.Error(), `unknown data set "cifar"`) {
		t.Errorf("Load(cifar) err = %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDigitsSplitMatchesOracle compares the split with the permutation
// computed by testdata/data/digits_split.py, an independent Python
// re-implementation of PCG-DXSM and of the shuffle documented on Digits.
func TestDigitsSplitMatchesOracle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "data", "digits_split.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.Fields(line) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("digits_split.txt: %v", err)
			}
			want = append(want, v)
		}
	}
	if len(want) != 1797 {
		t.Fatalf("digits_split.txt has %d indices, want 1797", len(want))
	}
	if got := digitsPerm(); !equalInts(got, want) {
		t.Fatalf("permutation differs from the Python oracle")
	}
	x, y, err := parseDigits(digitsGz)
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range want {
		d, r := test, k
		if k >= DigitsTestSize {
			d, r = train, k-DigitsTestSize
		}
		if d.Y[r] != y[i] || !equalF32(d.Row(r), x[i*64:(i+1)*64]) {
			t.Fatalf("%s row %d is not file row %d", d.Name, r, i)
		}
	}
}
