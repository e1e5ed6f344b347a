package data

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"strconv"
)

// digitsGz is the UCI "Optical Recognition of Handwritten Digits" test part
// (Alpaydin & Kaynak, 1998; CC BY 4.0) as distributed with scikit-learn:
// 1,797 lines of 64 pixels in 0..16 (8×8, row-major) and the label.
//
//go:embed digits.csv.gz
var digitsGz []byte

const (
	digitsFile   = "digits.csv.gz (embedded)"
	digitsSHA256 = "6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8"
	digitsN      = 1797
)

// DIGITS split sizes. The test part has ⌈0.2·1797⌉ = 360 images, as
// scikit-learn's train_test_split(test_size=0.2) gives; the rest is train.
const (
	DigitsTrainSize = 1437
	DigitsTestSize  = 360
)

// DigitsSeed1 and DigitsSeed2 seed the PCG generator ([rand.NewPCG]) that
// shuffles DIGITS before the split (1998: publication year; 1797: N).
const (
	DigitsSeed1 uint64 = 1998
	DigitsSeed2 uint64 = 1797
)

// Digits returns the embedded DIGITS set split into 1,437 train and 360 test
// examples of 64 features scaled by 1/16, with 10 classes.
//
// The split is fixed: a Fisher–Yates shuffle of the row indices 0..1796
// driven by rand.NewPCG(DigitsSeed1, DigitsSeed2), going i = 1796 down to 1
// and swapping i with j = ⌊u·(i+1)/2⁶⁴⌋ for the next u = Uint64() (the
// high word of the 128-bit product). The first 360 shuffled indices are the
// test set, the rest the train set, each in shuffled order. The split is not
// stratified. This procedure uses only the PCG output stream, which is
// specified, so it does not depend on the Go version's Shuffle/Perm.
//
// The embedded file's SHA-256 is verified on every call; each call returns
// fresh slices.
func Digits() (train, test *Dataset, err error) {
	x, y, err := parseDigits(digitsGz)
	if err != nil {
		return nil, nil, err
	}
	perm := digitsPerm()
	test = subset("digits/test", x, y, perm[:DigitsTestSize])
	train = subset("digits/train", x, y, perm[DigitsTestSize:])
	return train, test, nil
}

func digitsPerm() []int {
	src := rand.NewPCG(DigitsSeed1, DigitsSeed2)
	p := make([]int, digitsN)
	for i := range p {
		p[i] = i
	}
	for i := digitsN - 1; i > 0; i-- {
		j, _ := bits.Mul64(src.Uint64(), uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

func subset(name string, x []float32, y []uint8, idx []int) *Dataset {
	const d = 64
	d2 := &Dataset{Name: name, X: make([]float32, len(idx)*d), Y: make([]uint8, len(idx)), N: len(idx), D: d, Classes: 10}
	for k, i := range idx {
		copy(d2.X[k*d:(k+1)*d], x[i*d:(i+1)*d])
		d2.Y[k] = y[i]
	}
	return d2
}

// parseDigits decompresses gz, verifies its checksum and parses the CSV.
func parseDigits(gz []byte) (x []float32, y []uint8, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: corrupt gzip stream: %v", digitsFile, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: corrupt gzip stream: %v", digitsFile, err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != digitsSHA256 {
		return nil, nil, fmt.Errorf("data: %s: sha-256 of decompressed content is %s, want %s", digitsFile, got, digitsSHA256)
	}
	return parseDigitsCSV(raw, digitsN)
}

// parseDigitsCSV parses want lines of 64 pixels in 0..16 and a label in
// 0..9. It is separate from the checksum check so that it can be fuzzed.
func parseDigitsCSV(raw []byte, want int) (x []float32, y []uint8, err error) {
	x = make([]float32, 0, want*64)
	y = make([]uint8, 0, want)
	line := 0
	for len(raw) > 0 {
		line++
		var l []byte
		l, raw, _ = bytes.Cut(raw, []byte{'\n'})
		fields := bytes.Split(l, []byte{','})
		if len(fields) != 65 {
			return nil, nil, fmt.Errorf("data: %s: line %d has %d fields, want 65", digitsFile, line, len(fields))
		}
		for k, f := range fields {
			v, err := strconv.Atoi(string(f))
			if k < 64 && (err != nil || v < 0 || v > 16) {
				return nil, nil, fmt.Errorf("data: %s: line %d: pixel %d is %q, want an integer in 0..16", digitsFile, line, k, f)
			}
			if k == 64 {
				if err != nil || v < 0 || v > 9 {
					return nil, nil, fmt.Errorf("data: %s: line %d: label is %q, want 0..9", digitsFile, line, f)
				}
				y = append(y, uint8(v))
			} else {
				x = append(x, float32(v)/16)
			}
		}
	}
	if len(y) != want {
		return nil, nil, fmt.Errorf("data: %s: %d lines, want %d", digitsFile, len(y), want)
	}
	return x, y, nil
}
