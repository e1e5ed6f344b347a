package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DataDirEnv names the environment variable that overrides where [DefaultDir]
// looks for data sets: $DPCALC_DATA_DIR/<name>.
const DataDirEnv = "DPCALC_DATA_DIR"

// DebianFashionMNISTDir is where Debian's package dataset-fashion-mnist
// installs the four gzip-compressed idx files.
const DebianFashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// Names lists the data sets [Load] knows.
var Names = []string{"digits", "mnist", "fashion-mnist"}

// DefaultDir returns the directory Load and Fetch use for the named data set
// when given dir "":
//
//   - if $DPCALC_DATA_DIR is set, $DPCALC_DATA_DIR/<name> (the layout of the
//     project's shared/data: <dir>/mnist/train-images-idx3-ubyte.gz, …),
//     except that Fashion-MNIST falls back to the Debian path when that
//     directory does not exist but the Debian one does;
//   - "fashion-mnist": [DebianFashionMNISTDir];
//   - "mnist": <user cache dir>/dpcalc/mnist (e.g. ~/.cache/dpcalc/mnist),
//     or dpcalc-data/mnist in the working directory if there is no cache dir;
//   - "digits" and unknown names: "" (DIGITS is embedded in the binary).
func DefaultDir(name string) string {
	switch name {
	case "mnist", "fashion-mnist":
	default:
		return ""
	}
	if env := os.Getenv(DataDirEnv); env != "" {
		p := filepath.Join(env, name)
		if name != "fashion-mnist" || isDir(p) || !isDir(DebianFashionMNISTDir) {
			return p
		}
		return DebianFashionMNISTDir
	}
	if name == "fashion-mnist" {
		return DebianFashionMNISTDir
	}
	if cache, err := os.UserCacheDir(); err == nil {
		return filepath.Join(cache, "dpcalc", name)
	}
	return filepath.Join("dpcalc-data", name)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Load returns the train and test splits of the named data set: "digits"
// (embedded, dir ignored; see [Digits]), "mnist" or "fashion-mnist". For the
// idx sets, dir holds the four files train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte,
// each optionally gzip-compressed (detected from the content; the .gz name
// is tried first). dir "" means [DefaultDir](name).
//
// Every file is checked for the idx magic, dimensions, exact length, label
// range and the SHA-256 of its decompressed content before any data is
// returned; on error both results are nil. Pixels are scaled by 1/255.
// The four files are read concurrently, pixels converted as they are
// inflated; MNIST (train and test) takes about 0.5 s of CPU, mostly inflate.
func Load(name, dir string) (train, test *Dataset, err error) {
	if name == "digits" {
		return Digits()
	}
	spec, ok := specFor(name)
	if !ok {
		return nil, nil, fmt.Errorf("data: unknown data set %q (want digits, mnist or fashion-mnist)", name)
	}
	if dir == "" {
		dir = DefaultDir(name)
	}
	return loadIdxSet(spec, dir)
}

// findFile returns the path of base (preferring base.gz) in dir, or "" if
// neither exists.
func findFile(dir, base string) (string, error) {
	for _, p := range []string{filepath.Join(dir, base+".gz"), filepath.Join(dir, base)} {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("data: %w", err)
		}
	}
	return "", nil
}

// Missing reports, without reading them, which files of the named idx data
// set ("mnist" or "fashion-mnist") are absent from dir (dir "" means
// [DefaultDir](name)): nil when all four are there (their content is
// checked only by [Load]), else an error naming the directory, every missing
// file and the command that downloads them. It takes four stat calls.
// "digits" is embedded and never missing.
func Missing(name, dir string) error {
	if name == "digits" {
		return nil
	}
	spec, ok := specFor(name)
	if !ok {
		return fmt.Errorf("data: unknown data set %q (want digits, mnist or fashion-mnist)", name)
	}
	if dir == "" {
		dir = DefaultDir(name)
	}
	_, err := findFiles(spec, dir)
	return err
}

// findFiles returns the paths of spec's four files in dir, or an error
// naming every missing one and how to fetch them.
func findFiles(spec *setSpec, dir string) ([]string, error) {
	files := spec.files()
	paths := make([]string, len(files))
	var missing []string
	for i, f := range files {
		p, err := findFile(dir, f.Base)
		if err != nil {
			return nil, err
		}
		if p == "" {
			missing = append(missing, f.Base+".gz")
		}
		paths[i] = p
	}
	if len(missing) == 0 {
		return paths, nil
	}
	return nil, fmt.Errorf("data: %s is missing from %s: %s (or the same without .gz); download it with `%s`", spec.Name, dir, strings.Join(missing, ", "), FetchCommand(spec.Name, dir))
}

// FetchCommand returns the dpcalc command line that downloads the named
// data set into dir: `dpcalc data fetch NAME`, with --dir DIR when dir is
// not [DefaultDir](name).
func FetchCommand(name, dir string) string {
	if dir == "" || filepath.Clean(dir) == filepath.Clean(DefaultDir(name)) {
		return "dpcalc data fetch " + name
	}
	return "dpcalc data fetch " + name + " --dir " + dir
}

func loadIdxSet(spec *setSpec, dir string) (train, test *Dataset, err error) {
	files := spec.files()
	paths, err := findFiles(spec, dir)
	if err != nil {
		return nil, nil, err
	}
	// One goroutine per file; image files are converted to float32 as they
	// are decompressed.
	payloads := make([][]byte, len(files))
	pixels := make([][]float32, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i := range files {
		wg.Go(func() {
			if files[i].Magic == idxImages {
				pixels[i], errs[i] = readIdxFloat(paths[i], files[i])
			} else {
				payloads[i], errs[i] = readIdx(paths[i], files[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs { // first error in file order, deterministically
		if err != nil {
			return nil, nil, err
		}
	}
	train, err = assemble(spec.Name+"/train", spec.Classes, files[0], paths[0], paths[1], pixels[0], payloads[1])
	if err != nil {
		return nil, nil, err
	}
	test, err = assemble(spec.Name+"/test", spec.Classes, files[2], paths[2], paths[3], pixels[2], payloads[3])
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func assemble(name string, classes int, imgSpec fileSpec, imgPath, lblPath string, x []float32, lbl []byte) (*Dataset, error) {
	if len(lbl) != imgSpec.N {
		return nil, fmt.Errorf("data: %s has %d images but %s has %d labels", imgPath, imgSpec.N, lblPath, len(lbl))
	}
	return &Dataset{Name: name, X: x, Y: lbl, N: imgSpec.N, D: imgSpec.Rows * imgSpec.Cols, Classes: classes}, nil
}

// ClassCounts returns how many examples carry each label 0..Classes-1.
func (d *Dataset) ClassCounts() []int {
	c := make([]int, d.Classes)
	for _, y := range d.Y {
		c[y]++
	}
	return c
}
