package trainer

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dpcalc/dpcalc/trainer/data"
	"github.com/dpcalc/dpcalc/trainer/gemm"
)

// dpPCA returns a D×k row-major projection onto the top-k eigenvectors of
// the (noisy) second-moment matrix of a Poisson sample of ds, following
// Abadi et al. (2016) §4 "Differentially private PCA" without the random
// projection: every example joins the sample independently with probability
// q; sampled rows are normalised to unit L2 norm; A = Σ xxᵀ; each entry on
// and above the diagonal gets independent N(0, σ²) noise and is mirrored
// below it, so the released matrix is a Gaussian mechanism with L2
// sensitivity 1 under add/remove of one example (the upper triangle of xxᵀ
// has Frobenius norm ≤ ‖x‖² = 1); its event is PoissonSampled{q,
// Gaussian{σ}} ([Config.PCAEvent]). σ = 0 gives exact PCA of the sample.
//
// Cost: one D×D×|sample| matmul and one D×D symmetric eigendecomposition.
func dpPCA(ds *data.Dataset, k int, q, sigma float64, rng *rand.Rand) ([]float32, error) {
	d := ds.D
	idx := poissonLot(nil, ds.N, q, rng)
	xs := make([]float32, len(idx)*d)
	for r, i := range idx {
		row := xs[r*d : (r+1)*d]
		copy(row, ds.Row(i))
		if nrm := math.Sqrt(sqNorm(row)); nrm > 0 {
			inv := float32(1 / nrm)
			for j := range row {
				row[j] *= inv
			}
		}
	}
	a := make([]float32, d*d)
	gemm.Sgemm(true, false, d, d, len(idx), 1, xs, d, xs, d, 0, a, d)
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := float64(a[i*d+j])
			if sigma > 0 {
				v += sigma * rng.NormFloat64()
			}
			sym.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, errors.New("trainer: dp-pca eigendecomposition did not converge")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// Values are ascending: the top-k directions are the last k columns.
	proj := make([]float32, d*k)
	for r := 0; r < d; r++ {
		for c := 0; c < k; c++ {
			proj[r*k+c] = float32(vecs.At(r, d-1-c))
		}
	}
	return proj, nil
}
