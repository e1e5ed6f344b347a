package data

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadIdxFixtures checks each way an idx file can be wrong against
// small fixtures generated here: 3 images of 2×2 and 3 labels.
func TestReadIdxFixtures(t *testing.T) {
	pix := []byte{0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}
	img := idxBytes(idxImages, 3, 2, 2, pix)
	lbl := idxBytes(idxLabels, 3, 0, 0, []byte{7, 0, 9})
	imgSpec := fileSpec{Base: "img", SHA256: sha256Hex(img), Size: int64(len(img)), Magic: idxImages, N: 3, Rows: 2, Cols: 2}
	lblSpec := fileSpec{Base: "lbl", SHA256: sha256Hex(lbl), Size: int64(len(lbl)), Magic: idxLabels, N: 3}

	imgGz := gzipBytes(t, img)
	corruptGz := bytes.Clone(imgGz)
	corruptGz[len(corruptGz)-6] ^= 0x55 // inside the CRC-32 trailer
	badDeflate := bytes.Clone(imgGz)
	badDeflate[10] = 0x07 // first deflate block: BFINAL=1, BTYPE=11 (reserved)
	otherPix := bytes.Clone(pix)
	otherPix[3] = 103

	for _, tc := range []struct {
		name    string
		file    string // file name written in the temp dir
		content []byte
		spec    fileSpec
		want    string // "" means success
	}{
		{"raw images", "img", img, imgSpec, ""},
		{"gzip images", "img.gz", imgGz, imgSpec, ""},
		{"gzip content without .gz name", "img", imgGz, imgSpec, ""},
		{"raw content with .gz name", "img.gz", img, imgSpec, ""},
		{"labels", "lbl", lbl, lblSpec, ""},
		{"wrong magic", "img", idxBytes(0x00000802, 3, 2, 2, pix), imgSpec, "idx magic 0x00000802, want 0x00000803"},
		{"labels file given for images", "img", lbl, imgSpec, "idx magic 0x00000801, want 0x00000803"},
		{"wrong count", "img", idxBytes(idxImages, 4, 2, 2, pix), imgSpec, "header says 4 items, want 3"},
		{"wrong dims", "img", idxBytes(idxImages, 3, 3, 2, pix), imgSpec, "header says 3×2 images, want 2×2"},
		{"truncated header", "img", img[:10], imgSpec, "truncated: header has 10 of 16 bytes"},
		{"truncated payload", "img", img[:20], imgSpec, "truncated: payload has 4 of 12 bytes"},
		{"truncated gzip", "img.gz", imgGz[:len(imgGz)-10], imgSpec, "img.gz: truncated"},
		{"empty file", "img", nil, imgSpec, "truncated: header has 0 of 16 bytes"},
		{"trailing bytes", "img", append(bytes.Clone(img), 0, 0), imgSpec, "2 unexpected bytes after the 12-byte payload"},
		{"bad label", "lbl", idxBytes(idxLabels, 3, 0, 0, []byte{7, 12, 9}), lblSpec, "label 12 at index 1 is not in [0, 10)"},
		{"checksum mismatch", "img", idxBytes(idxImages, 3, 2, 2, otherPix), imgSpec, "sha-256 of decompressed content is " + sha256Hex(idxBytes(idxImages, 3, 2, 2, otherPix)) + ", want " + imgSpec.SHA256},
		{"gzip crc corrupt", "img.gz", corruptGz, imgSpec, "corrupt gzip stream: gzip: invalid checksum"},
		{"gzip deflate corrupt", "img.gz", badDeflate, imgSpec, "corrupt gzip stream: flate: corrupt input"},
		{"gzip header corrupt", "img.gz", append([]byte{0x1f, 0x8b, 0x99}, imgGz[3:]...), imgSpec, "corrupt gzip stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, tc.file, tc.content)
			payload, err := readIdx(p, tc.spec)
			if tc.spec.Magic == idxImages {
				// The streaming float path must agree with the byte path.
				x, ferr := readIdxFloat(p, tc.spec)
				if (err == nil) != (ferr == nil) || (err != nil && err.Error() != ferr.Error()) {
					t.Errorf("readIdxFloat err = %v, readIdx err = %v", ferr, err)
				}
				if err == nil {
					for i, b := range pix {
						if x[i] != float32(b)/255 {
							t.Errorf("x[%d] = %g, want %d/255", i, x[i], b)
						}
					}
				}
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.spec.Magic == idxImages && !bytes.Equal(payload, pix) {
					t.Errorf("payload = %v, want %v", payload, pix)
				}
				if tc.spec.Magic == idxLabels && !bytes.Equal(payload, []byte{7, 0, 9}) {
					t.Errorf("payload = %v", payload)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "data: "+p+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("err = %q, want one line \"data: %s: …%s…\"", msg, p, tc.want)
			}
			if payload != nil {
				t.Error("payload returned alongside an error")
			}
		})
	}
}

func TestLoadIdxSetFixture(t *testing.T) {
	pix := []byte{0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}
	img := idxBytes(idxImages, 3, 2, 2, pix)
	lbl := idxBytes(idxLabels, 3, 0, 0, []byte{7, 0, 9})
	spec := &setSpec{
		Name: "fixture", Classes: 10,
		Train: [2]fileSpec{
			{Base: "train-images-idx3-ubyte", Magic: idxImages, N: 3, Rows: 2, Cols: 2},
			{Base: "train-labels-idx1-ubyte", Magic: idxLabels, N: 3},
		},
		Test: [2]fileSpec{
			{Base: "t10k-images-idx3-ubyte", Magic: idxImages, N: 3, Rows: 2, Cols: 2},
			{Base: "t10k-labels-idx1-ubyte", Magic: idxLabels, N: 2},
		},
	}
	dir := t.TempDir()
	writeFile(t, dir, "train-images-idx3-ubyte.gz", gzipBytes(t, img))
	writeFile(t, dir, "train-labels-idx1-ubyte", lbl)
	writeFile(t, dir, "t10k-images-idx3-ubyte", img)
	writeFile(t, dir, "t10k-labels-idx1-ubyte", idxBytes(idxLabels, 2, 0, 0, []byte{1, 2}))
	_, _, err := loadIdxSet(spec, dir)
	if err == nil || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte has 3 images but") || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte has 2 labels") {
		t.Fatalf("err = %v, want image/label count mismatch", err)
	}
	spec.Test[1].N = 3
	writeFile(t, dir, "t10k-labels-idx1-ubyte", lbl)
	train, test, err := loadIdxSet(spec, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 1, 0.2, 0.4}
	for i, w := range want {
		if train.X[i] != w || test.X[i] != w {
			t.Errorf("X[%d] = %g/%g, want %g", i, train.X[i], test.X[i], w)
		}
	}
	if train.N != 3 || train.D != 4 || train.Name != "fixture/train" || !bytes.Equal(test.Y, []byte{7, 0, 9}) {
		t.Errorf("train %+v", *train)
	}
}
