package data

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"
)

func checkDataErr(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "data: ") || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error %q is not one line prefixed \"data: \"", msg)
	}
}

// FuzzReadIdx reads arbitrary bytes as a 3-image 2×2 idx file or a 3-label
// idx file, raw or gzip-compressed by the test (so that the fuzzer also
// reaches the idx parser behind a valid gzip layer), with and without a
// checksum. A file that reads is exactly header + payload, and its labels
// are in 0..9; a file that does not is refused with a one-line error.
func FuzzReadIdx(f *testing.F) {
	pix := []byte{0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}
	img := idxBytes(idxImages, 3, 2, 2, pix)
	lbl := idxBytes(idxLabels, 3, 0, 0, []byte{7, 0, 9})
	imgGz := gzipBytes(f, img)
	for _, b := range [][]byte{img, lbl, imgGz, img[:10], img[:20], nil, append(bytes.Clone(img), 0, 0),
		idxBytes(idxImages, 4, 2, 2, pix), idxBytes(idxImages, 3, 3, 2, pix), idxBytes(idxLabels, 3, 0, 0, []byte{7, 12, 9}),
		imgGz[:len(imgGz)-10], append([]byte{0x1f, 0x8b, 0x99}, imgGz[3:]...), []byte{0x1f}, []byte{0x1f, 0x8b},
		idxBytes(idxImages, 0xffffffff, 0xffff, 0xffff, nil)} {
		for mode := uint8(0); mode < 8; mode++ {
			f.Add(b, mode)
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, mode uint8) {
		spec := fileSpec{Base: "img", Magic: idxImages, N: 3, Rows: 2, Cols: 2, Size: int64(len(img))}
		ref := img
		if mode&1 != 0 {
			spec = fileSpec{Base: "lbl", Magic: idxLabels, N: 3, Size: int64(len(lbl))}
			ref = lbl
		}
		if mode&2 != 0 {
			spec.SHA256 = sha256Hex(ref)
		}
		// logical is what readIdx should see after its gzip sniffing.
		content, logical := b, b
		if mode&4 != 0 {
			content = gzipBytes(t, b)
		} else if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			logical = nil
			if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
				if d, err := io.ReadAll(zr); err == nil {
					logical = d
				}
			}
		}
		p := writeFile(t, dir, "f", content)
		payload, err := readIdx(p, spec)
		if err != nil {
			if payload != nil {
				t.Fatalf("readIdx returned a payload with error %v", err)
			}
			checkDataErr(t, err)
		} else {
			hdr := 16
			if spec.Magic == idxLabels {
				hdr = 8
			}
			if len(logical) != hdr+len(payload) || !bytes.Equal(logical[hdr:], payload) {
				t.Fatalf("readIdx accepted %d bytes as a %d-byte payload", len(logical), len(payload))
			}
			if spec.SHA256 != "" && !bytes.Equal(logical, ref) {
				t.Fatalf("readIdx accepted content that does not match the checksum")
			}
			if spec.Magic == idxLabels {
				for _, l := range payload {
					if l >= 10 {
						t.Fatalf("label %d accepted", l)
					}
				}
			}
		}
		// verifyFile must agree on checksummed specs: it accepts exactly the
		// reference content.
		if spec.SHA256 != "" {
			verr := verifyFile(p, spec)
			if (verr == nil) != bytes.Equal(logical, ref) {
				t.Fatalf("verifyFile error %v for content equal to the reference: %v", verr, bytes.Equal(logical, ref))
			}
			if verr != nil {
				checkDataErr(t, verr)
			}
		}
	})
}

// FuzzParseDigitsCSV parses arbitrary text as want (0..7) DIGITS lines.
// Success means exactly want lines of 64 pixels in [0, 1] (scaled by
// 1/16) and a label in 0..9; failure is a one-line error naming the line.
// The gzip+checksum front end (parseDigits) is fuzzed with the same bytes.
func FuzzParseDigitsCSV(f *testing.F) {
	zr, err := gzip.NewReader(bytes.NewReader(digitsGz))
	if err != nil {
		f.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte{'\n'})
	f.Add(bytes.Join(lines[:3], nil), uint8(3))
	f.Add(bytes.Join(lines[:1], nil), uint8(1))
	f.Add(bytes.TrimSuffix(lines[0], []byte{'\n'}), uint8(1))
	f.Add(bytes.Join(lines[:2], nil), uint8(3))
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("\n"), uint8(1))
	row := strings.Repeat("16,", 64)
	for _, s := range []string{row + "9\n", row + "10\n", row + "-1\n", row + "+9\n", row + "9\r\n", row + " 9\n",
		strings.Repeat("17,", 64) + "1\n", strings.Repeat("0,", 63) + "1\n", row + "9,\n", row + "9\n\n", row + "0x9\n",
		strings.Repeat("1_0,", 64) + "1\n", row + "99999999999999999999\n"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, want uint8) {
		n := int(want % 8)
		x, y, err := parseDigitsCSV(b, n)
		if err != nil {
			if x != nil || y != nil {
				t.Fatalf("parseDigitsCSV returned data with error %v", err)
			}
			checkDataErr(t, err)
		} else {
			if len(y) != n || len(x) != 64*n {
				t.Fatalf("%d labels and %d pixels for %d lines", len(y), len(x), n)
			}
			for i, v := range x {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("pixel %d = %g not in [0, 1]", i, v)
				}
			}
			for i, l := range y {
				if l > 9 {
					t.Fatalf("label %d = %d", i, l)
				}
			}
		}
		// The embedded-file front end: a gzip of b is refused by the
		// checksum unless b is the real file, and never panics.
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(b)
		zw.Close()
		for _, in := range [][]byte{gz.Bytes(), b} {
			x, y, err := parseDigits(in)
			if err == nil && !bytes.Equal(b, raw) {
				t.Fatalf("parseDigits accepted content that is not DIGITS (%d lines)", len(y))
			}
			if err != nil {
				if x != nil || y != nil {
					t.Fatalf("parseDigits returned data with error %v", err)
				}
				checkDataErr(t, err)
			}
		}
	})
}

// TestReadIdxTrailingGzip: a small gzip file whose decompressed content is
// far longer than the idx payload is refused with the count of trailing
// bytes, without holding them in memory (readIdx streams the trailer).
func TestReadIdxTrailingGzip(t *testing.T) {
	img := idxBytes(idxImages, 3, 2, 2, []byte{0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8})
	big := append(bytes.Clone(img), make([]byte, 8<<20)...)
	p := writeFile(t, t.TempDir(), "img.gz", gzipBytes(t, big))
	_, err := readIdx(p, fileSpec{Base: "img", Magic: idxImages, N: 3, Rows: 2, Cols: 2})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d unexpected bytes", 8<<20)) {
		t.Errorf("error %v, want the trailing byte count", err)
	}
}
