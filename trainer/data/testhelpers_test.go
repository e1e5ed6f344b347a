package data

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// sharedDataDir returns the project's shared data directory: $DPCALC_DATA_DIR
// if set, else the first ancestor of the package directory that has a
// shared/data sibling. It skips the test when neither exists.
func sharedDataDir(t testing.TB) string {
	t.Helper()
	if env := os.Getenv(DataDirEnv); env != "" {
		return env
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; {
		p := filepath.Join(d, "shared", "data")
		if isDir(filepath.Join(p, "mnist")) {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	t.Skipf("shared data not found: set %s or place shared/data beside the repository (searched upwards from %s)", DataDirEnv, wd)
	return ""
}

// idxBytes builds an idx file: images (3 dims) when rows > 0, else labels.
func idxBytes(magic uint32, n, rows, cols int, payload []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	binary.Write(&b, binary.BigEndian, uint32(n))
	if rows > 0 {
		binary.Write(&b, binary.BigEndian, uint32(rows))
		binary.Write(&b, binary.BigEndian, uint32(cols))
	}
	b.Write(payload)
	return b.Bytes()
}

func gzipBytes(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
