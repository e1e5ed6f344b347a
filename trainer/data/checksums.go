package data

// fileSpec describes one idx file of a data set: its base name (without any
// .gz suffix), the SHA-256 and length of its decompressed content, and the
// header it must carry.
type fileSpec struct {
	Base   string // e.g. "train-images-idx3-ubyte"
	SHA256 string // hex SHA-256 of the decompressed content; "" skips the check (tests only)
	Size   int64  // decompressed length in bytes
	Magic  uint32 // idxImages or idxLabels
	N      int    // number of items
	Rows   int    // image rows (images only)
	Cols   int    // image columns (images only)
}

// setSpec describes an idx data set (MNIST or Fashion-MNIST).
type setSpec struct {
	Name    string
	Classes int
	Train   [2]fileSpec // images, labels
	Test    [2]fileSpec // images, labels
	Mirrors []string    // default base URLs for Fetch, HTTPS only
}

const (
	idxImages uint32 = 0x00000803 // unsigned byte, 3 dimensions
	idxLabels uint32 = 0x00000801 // unsigned byte, 1 dimension
)

func images(base, sum string, n int) fileSpec {
	return fileSpec{Base: base, SHA256: sum, Size: 16 + int64(n)*28*28, Magic: idxImages, N: n, Rows: 28, Cols: 28}
}

func labels(base, sum string, n int) fileSpec {
	return fileSpec{Base: base, SHA256: sum, Size: 8 + int64(n), Magic: idxLabels, N: n}
}

// mnistSpec: LeCun, Cortes, Burges, "The MNIST database of handwritten
// digits". Checksums of the decompressed files as listed in the project's
// shared/data/README.md and re-computed from its copies (zcat | sha256sum).
var mnistSpec = setSpec{
	Name:    "mnist",
	Classes: 10,
	Train: [2]fileSpec{
		images("train-images-idx3-ubyte", "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db", 60000),
		labels("train-labels-idx1-ubyte", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", 60000),
	},
	Test: [2]fileSpec{
		images("t10k-images-idx3-ubyte", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", 10000),
		labels("t10k-labels-idx1-ubyte", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", 10000),
	},
	Mirrors: []string{
		"https://ossci-datasets.s3.amazonaws.com/mnist/",
		"https://storage.googleapis.com/cvdf-datasets/mnist/",
	},
}

// fashionSpec: Xiao, Rasul, Vollgraf, "Fashion-MNIST: a Novel Image Dataset
// for Benchmarking Machine Learning Algorithms", arXiv:1708.07747.
//
// Provenance of the checksums: Debian package dataset-fashion-mnist
// 0.0~git20200523.55506a9-1 (bookworm), files under
// /usr/share/datasets/fashion-mnist/, computed with `zcat FILE | sha256sum`.
// Debian recompressed the .gz files (their MD5s differ from upstream's), so
// only the decompressed content is comparable; it has the upstream layout
// (60,000/10,000 images of 28×28, exactly 6,000/1,000 labels per class).
var fashionSpec = setSpec{
	Name:    "fashion-mnist",
	Classes: 10,
	Train: [2]fileSpec{
		images("train-images-idx3-ubyte", "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888", 60000),
		labels("train-labels-idx1-ubyte", "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9", 60000),
	},
	Test: [2]fileSpec{
		images("t10k-images-idx3-ubyte", "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b", 10000),
		labels("t10k-labels-idx1-ubyte", "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34", 10000),
	},
	Mirrors: []string{
		// The upstream repository's copies. Upstream's S3 "website" endpoint
		// serves plain HTTP only, so it is not listed.
		"https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
	},
}

// files returns the four files of s in a fixed order: train images, train
// labels, test images, test labels.
func (s *setSpec) files() []fileSpec {
	return []fileSpec{s.Train[0], s.Train[1], s.Test[0], s.Test[1]}
}

func specFor(name string) (*setSpec, bool) {
	switch name {
	case "mnist":
		return &mnistSpec, true
	case "fashion-mnist":
		return &fashionSpec, true
	}
	return nil, false
}
