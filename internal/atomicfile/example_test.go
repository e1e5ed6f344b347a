package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dpcalc/dpcalc/internal/atomicfile"
)

func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "atomicfile-example")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "ledger.json")
	err := atomicfile.Write(p, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, `{"events":[]}`)
		return err
	})
	b, _ := os.ReadFile(p)
	fmt.Println(err, string(b))
	// Output: <nil> {"events":[]}
}
