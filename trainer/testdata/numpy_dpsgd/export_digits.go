//go:build ignore

// export_digits writes the DIGITS split of data.Digits() as CSV (64 pixel
// values scaled by 1/16, then the label) for dpsgd.py:
//
//	go run ./trainer/testdata/numpy_dpsgd/export_digits.go /tmp
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpcalc/dpcalc/trainer/data"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	tr, te, err := data.Digits()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, d := range map[string]*data.Dataset{"dtrain.csv": tr, "dtest.csv": te} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w := bufio.NewWriter(f)
		for i := 0; i < d.N; i++ {
			for _, v := range d.Row(i) {
				fmt.Fprintf(w, "%g,", v)
			}
			fmt.Fprintf(w, "%d\n", d.Y[i])
		}
		w.Flush()
		f.Close()
	}
}
