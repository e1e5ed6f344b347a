package data

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// openMaybeGzip opens path and returns a reader of its content, transparently
// decompressing it when it starts with the gzip magic bytes 1f 8b (the file
// name is not consulted). close releases the file.
func openMaybeGzip(path string) (r io.Reader, close func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, nil, fmt.Errorf("data: %s: %w", path, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fileErrorf(path, "corrupt gzip stream: %v", err)
		}
		return zr, f.Close, nil
	}
	return br, f.Close, nil
}

// fileError is a problem with one file: "data: <path>: <reason>".
type fileError struct {
	Path   string
	Reason string
}

func (e *fileError) Error() string { return "data: " + e.Path + ": " + e.Reason }

func fileErrorf(path, format string, args ...any) error {
	return &fileError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// readErr turns an error from reading the content of path into a one-line
// message saying what is wrong.
func readErr(path string, err error, what string, got, want int) error {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fileErrorf(path, "truncated: %s has %d of %d bytes", what, got, want)
	case errors.As(err, &ce), errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return fileErrorf(path, "corrupt gzip stream: %v", err)
	}
	return fileErrorf(path, "reading %s: %v", what, err)
}

// readIdx reads and validates one idx file against spec: magic, dimensions,
// exact length (no trailing bytes), label range and, if spec.SHA256 is set,
// the SHA-256 of the decompressed content. It returns the payload (the bytes
// after the header). Errors name the file and say what is wrong.
func readIdx(path string, spec fileSpec) ([]byte, error) {
	raw, _, err := readIdxInto(path, spec, false)
	return raw, err
}

// readIdxFloat is readIdx for image files, returning the pixels scaled by
// 1/255. It converts while decompressing, so the bytes are never held whole.
func readIdxFloat(path string, spec fileSpec) ([]float32, error) {
	_, x, err := readIdxInto(path, spec, true)
	return x, err
}

func readIdxInto(path string, spec fileSpec, toFloat bool) (raw []byte, x []float32, err error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, nil, err
	}
	defer closeFn()

	hdrLen := 8
	if spec.Magic == idxImages {
		hdrLen = 16
	}
	hdr := make([]byte, hdrLen)
	if n, err := io.ReadFull(r, hdr[:4]); err != nil {
		return nil, nil, readErr(path, err, "header", n, hdrLen)
	}
	if m := binary.BigEndian.Uint32(hdr); m != spec.Magic {
		return nil, nil, fileErrorf(path, "idx magic 0x%08x, want 0x%08x (%s)", m, spec.Magic, kindName(spec.Magic))
	}
	if n, err := io.ReadFull(r, hdr[4:]); err != nil {
		return nil, nil, readErr(path, err, "header", 4+n, hdrLen)
	}
	n := int(binary.BigEndian.Uint32(hdr[4:]))
	if n != spec.N {
		return nil, nil, fileErrorf(path, "header says %d items, want %d", n, spec.N)
	}
	size := n
	if spec.Magic == idxImages {
		rows, cols := int(binary.BigEndian.Uint32(hdr[8:])), int(binary.BigEndian.Uint32(hdr[12:]))
		if rows != spec.Rows || cols != spec.Cols {
			return nil, nil, fileErrorf(path, "header says %d×%d images, want %d×%d", rows, cols, spec.Rows, spec.Cols)
		}
		size = n * rows * cols
	}
	// The hash is computed as the payload streams in.
	h := sha256.New()
	h.Write(hdr)
	if toFloat {
		x = make([]float32, size)
		buf := make([]byte, 256<<10)
		for off := 0; off < size; {
			chunk := buf[:min(len(buf), size-off)]
			got, err := io.ReadFull(r, chunk)
			if err != nil {
				return nil, nil, readErr(path, err, "payload", off+got, size)
			}
			h.Write(chunk)
			dst := x[off : off+len(chunk)]
			for i, b := range chunk {
				dst[i] = scale255[b]
			}
			off += len(chunk)
		}
	} else {
		raw = make([]byte, size)
		if got, err := io.ReadFull(r, raw); err != nil {
			return nil, nil, readErr(path, err, "payload", got, size)
		}
		h.Write(raw)
	}
	// Read to EOF: this finds trailing bytes and makes gzip verify its CRC-32
	// and length trailer.
	var extra [4096]byte
	trailing := 0
	for {
		k, err := r.Read(extra[:])
		trailing += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, readErr(path, err, "trailer", 0, 0)
		}
	}
	if trailing > 0 {
		return nil, nil, fileErrorf(path, "%d unexpected bytes after the %d-byte payload", trailing, size)
	}
	if spec.Magic == idxLabels {
		for i, l := range raw {
			if l >= 10 {
				return nil, nil, fileErrorf(path, "label %d at index %d is not in [0, 10)", l, i)
			}
		}
	}
	if spec.SHA256 != "" {
		if got := hex.EncodeToString(h.Sum(nil)); got != spec.SHA256 {
			return nil, nil, fileErrorf(path, "sha-256 of decompressed content is %s, want %s (corrupt or not the expected file)", got, spec.SHA256)
		}
	}
	return raw, x, nil
}

func kindName(magic uint32) string {
	if magic == idxImages {
		return "idx3 unsigned-byte images"
	}
	return "idx1 unsigned-byte labels"
}

// verifyFile checks that path (gzip or raw) decompresses to content with the
// SHA-256 and length in spec, without parsing it.
func verifyFile(path string, spec fileSpec) error {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return err
	}
	defer closeFn()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return readErr(path, err, "content", int(n), int(spec.Size))
	}
	if n != spec.Size {
		return fileErrorf(path, "decompressed content has %d bytes, want %d", n, spec.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != spec.SHA256 {
		return fileErrorf(path, "sha-256 of decompressed content is %s, want %s (corrupt or not the expected file)", got, spec.SHA256)
	}
	return nil
}

// scale255 maps a byte to [0, 1].
var scale255 = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()
