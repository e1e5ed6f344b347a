package trainer

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dpcalc/dpcalc/accounting"
)

// Method names a training algorithm.
type Method string

// The training methods. Their update rules are documented on [Train].
const (
	// MethodNP is non-private minibatch SGD, the baseline.
	MethodNP Method = "np"
	// MethodDPSGD is Abadi et al. (2016) Algorithm 1.
	MethodDPSGD Method = "dpsgd"
	// MethodDPD is differentially private dropout (Beyza Ermis and Cemgil
	// 2017, Algorithm 1): Gaussian dropout read as SGLD noise.
	MethodDPD Method = "dpd"
	// MethodDPVD is differentially private variational dropout (Ermis and
	// Cemgil, Algorithm 1): additive reparameterisation θ = φ + ζε with the
	// local reparameterisation trick.
	MethodDPVD Method = "dpvd"
	// MethodSGLD is SGLD with the DPD papers' privacy noise and no dropout.
	MethodSGLD Method = "sgld"
)

// Methods lists every method in display order.
var Methods = []Method{MethodNP, MethodDPSGD, MethodDPD, MethodDPVD, MethodSGLD}

// Private reports whether m adds privacy noise.
func (m Method) Private() bool { return m != MethodNP }

// noiseFactor is the ratio of the noise standard deviation to σ·S, S being
// the L2 sensitivity of the summed clipped gradient. Abadi uses N(0, σ²C²);
// the DPD papers use N(0, 4σ²C²) (DPD Algorithm 1 line 7, DPVD Algorithm 1
// line 7).
func (m Method) noiseFactor() float64 {
	switch m {
	case MethodDPD, MethodDPVD, MethodSGLD:
		return 2
	case MethodDPSGD:
		return 1
	}
	return 0
}

// Sampling names how lots are drawn.
type Sampling string

const (
	// SamplingPoisson includes every example independently with probability
	// q = LotSize/N each step, so lot sizes vary. This is the mechanism the
	// accountants' PoissonSampled event describes; the default for private
	// methods.
	SamplingPoisson Sampling = "poisson"
	// SamplingShuffle shuffles once per epoch and cuts fixed-size lots. For
	// private methods the last, partial lot of an epoch is dropped, so an
	// epoch is exactly the accountants' Shuffled event, which the ledger
	// records once per epoch, before the epoch's first lot (see
	// [Config.LedgerUnit]). No amplification by shuffling is proven: the
	// accountants bound a Shuffled epoch without it. The default for np,
	// which keeps the partial lot.
	SamplingShuffle Sampling = "shuffle"
	// SamplingRandomAllocation draws an epoch of t steps in which every
	// example is in exactly AllocationK of them, a uniformly random
	// AllocationK-subset of the t steps chosen independently of the other
	// examples, so lot sizes vary (mean AllocationK·N/t). t is ⌈k·N/L⌉ (see
	// [Config.StepsPerEpoch]), as dpcalc eps forms it from --batch and --n.
	// An epoch is the accountants' RandomAllocation event, which the ledger
	// records once per epoch, before the epoch's first lot (under
	// add-remove: adding or removing an example moves no other).
	SamplingRandomAllocation Sampling = "random-allocation"
	// SamplingBallsInBins is SamplingRandomAllocation with k = 1: every
	// example in one lot of each epoch.
	SamplingBallsInBins Sampling = "balls-in-bins"
	// SamplingTruncatedPoisson draws a Poisson lot at rate q = LotSize/N
	// and, when more than MaxLotSize examples are drawn, keeps a uniformly
	// random MaxLotSize of them (drawn from the run's RNG), so no lot
	// exceeds MaxLotSize. Each step is the accountants'
	// TruncatedSubsampledGaussian event (under add-remove).
	SamplingTruncatedPoisson Sampling = "truncated-poisson"
)

// maxAllocation bounds k·N of random allocation: the epoch's allocation
// (k steps per example) is held in memory and in the checkpoint.
const maxAllocation = 1 << 24

// allocated reports whether lots are drawn by random allocation.
func (c *Config) allocated() bool {
	return c.Sampling == SamplingRandomAllocation || c.Sampling == SamplingBallsInBins
}

// allocK is the k of random allocation: AllocationK, 1 for balls-in-bins.
func (c *Config) allocK() int {
	if c.Sampling == SamplingBallsInBins {
		return 1
	}
	return c.AllocationK
}

// Config is a training run's full, JSON-serialisable configuration. Zero
// fields take the method's defaults (see [Config.WithDefaults]).
type Config struct {
	Method Method `json:"method"`
	// Hidden lists the widths of the hidden ReLU layers; default [1000].
	Hidden []int `json:"hidden"`
	// PCADim, if > 0, projects inputs onto the top PCADim principal
	// directions before the first layer (Abadi §4 "DP-PCA"); non-trainable.
	PCADim int `json:"pca_dim,omitempty"`
	// PCANoiseMultiplier σ_p: noise std on the covariance entries of the
	// L2-normalised sample (sensitivity 1). Required > 0 for private methods
	// with PCADim > 0. Abadi §5.2 uses σ_p = 7 for ε_p; 4 for the 2 ε_p run.
	PCANoiseMultiplier float64 `json:"pca_noise_multiplier,omitempty"`
	// PCASamplingRate q_p: each example joins the PCA sample independently
	// with this probability; default 1 for np, 0.1 otherwise.
	PCASamplingRate float64 `json:"pca_sampling_rate,omitempty"`

	// LotSize L is the expected lot size; q = L/N. Default 600 (clamped to N).
	LotSize int `json:"lot_size"`
	// BatchSize bounds how many examples one forward/backward pass holds in
	// memory; a lot is processed in ceil(lot/BatchSize) batches whose clipped
	// gradients are summed (Abadi §3.1, lots vs batches). Default LotSize.
	BatchSize int `json:"batch_size,omitempty"`
	// Epochs: the run takes Epochs·ceil(N/LotSize) steps (integer arithmetic).
	Epochs int `json:"epochs"`
	// Sampling defaults to poisson for private methods, shuffle for np.
	Sampling Sampling `json:"sampling"`
	// AllocationK is the k of SamplingRandomAllocation: the number of an
	// epoch's steps each example is in (default 1; must be 0 or 1 with
	// balls-in-bins, 0 with the other samplings).
	AllocationK int `json:"allocation_k,omitempty"`
	// ExamplesPerUser K ≥ 2 makes the ledger pay the user-level event:
	// each Poisson step is accounting.UserMixture(σ_eff, q, K), the step
	// seen by a user with at most K examples, added or removed with all of
	// them (0 or 1: example level). The lots are drawn as always (each
	// example with probability q); only the accounting changes. Poisson
	// sampling only, without canaries.
	ExamplesPerUser int `json:"examples_per_user,omitempty"`
	// MaxLotSize is the cap B of SamplingTruncatedPoisson, in [1, N] (0
	// with the other samplings): a Poisson lot of more examples keeps a
	// uniformly random B of them.
	MaxLotSize int `json:"max_lot_size,omitempty"`

	// LearningRate η0. Defaults: np 0.1, dpsgd 0.1 (Abadi §5.2), dpd/dpvd/sgld
	// 0.5. The DPD/DPVD papers' η0 = 0.05 (DIGITS) multiplies their eq. 5
	// gradient, (N/S)·Σ, with a further 1/2; our step uses the mean clipped
	// gradient, for which 0.05 with 1/t decay barely trains (67% on DIGITS
	// at ε=10 vs 93% with 0.5; see the package's long tests).
	LearningRate float64 `json:"learning_rate"`
	// LearningRateFinal and DecayEpochs: dpsgd decays η linearly from
	// LearningRate to LearningRateFinal over DecayEpochs epochs, then holds it
	// (Abadi §5.2: 0.1 → 0.052 over 10 epochs).
	LearningRateFinal float64 `json:"learning_rate_final,omitempty"`
	DecayEpochs       int     `json:"decay_epochs,omitempty"`
	// Gamma is the decay exponent of η_t = η0/t^γ for dpd, dpvd, sgld, t the
	// 1-based epoch ("round"); default 1 (DPD §5).
	Gamma float64 `json:"gamma,omitempty"`

	// ClipNorm C bounds each example's gradient norm over all parameters
	// (flat clipping). Default 4 (Abadi §5.2); ignored when PerLayerClip set.
	ClipNorm float64 `json:"clip_norm"`
	// PerLayerClip, if non-empty, clips layer l's (weights and bias) gradient
	// of every example to PerLayerClip[l]; one entry per dense layer. The
	// summed gradient then has L2 sensitivity √Σ C_l².
	PerLayerClip []float64 `json:"per_layer_clip,omitempty"`
	// NoiseMultiplier σ. The noise std on the summed clipped gradient is
	// σ·S (dpsgd) or 2σ·S (dpd, dpvd, sgld), S the sensitivity.
	NoiseMultiplier float64 `json:"noise_multiplier"`

	// TargetEpsilon and TargetDelta, if TargetEpsilon > 0, make the run stop
	// before a step would push ε(TargetDelta) above TargetEpsilon. Needs
	// Options.NewAccountant.
	TargetEpsilon float64 `json:"target_epsilon,omitempty"`
	TargetDelta   float64 `json:"target_delta,omitempty"`

	// SGLDTemperature scales sgld's Langevin noise N(0, 2η_t·T/N); default 1.
	SGLDTemperature float64 `json:"sgld_temperature,omitempty"`
	// PriorPrecision λ of sgld's N(0, λ⁻¹) prior; default 1.
	PriorPrecision float64 `json:"prior_precision,omitempty"`

	// Accountant names the accountant the run was calibrated and budgeted
	// with (an accounting.Kind). The trainer does not read it (the
	// accountant comes from Options.NewAccountant); it is stored so that a
	// resumed run can be held to the same accountant.
	Accountant string `json:"accountant,omitempty"`

	// Canaries, if > 0, inserts that many audit canaries of kind
	// CanaryKind (default input), each included in the training data
	// independently with probability ½ from a stream kept apart from the
	// training stream (see CanarySeed), and audits the final model with
	// them (Result.Audit). The canaries count as data: the training set has
	// n + Canaries slots, so q = LotSize/(n + Canaries) and an epoch has
	// ⌈(n + Canaries)/LotSize⌉ steps whichever canaries were drawn in (a
	// rate that depended on their number would not be the mechanism the
	// accountants bound). Needs Poisson sampling for a private method and
	// no PCA.
	Canaries   int        `json:"canaries,omitempty"`
	CanaryKind CanaryKind `json:"canary_kind,omitempty"`
	// CanarySeed, if set, seeds the canaries' inclusion bits and contents
	// (SHA-256("dpcalc/canaries" ‖ seed)); otherwise they come from
	// crypto/rand. It is never derived from Seed: the audit is valid only
	// if the bits are independent of the training randomness.
	CanarySeed *uint64 `json:"canary_seed,omitempty"`

	// Seed, if set, makes the run reproducible (initialisation, sampling and
	// the keys of the noise streams all come from one ChaCha8 stream seeded
	// from it; see NoiseGenerator). If nil the
	// stream is seeded from crypto/rand. A fixed seed makes the noise
	// predictable to whoever knows it; the CLI warns.
	Seed *uint64 `json:"seed,omitempty"`
}

// DatasetDefaults returns the settings a run of method m on the named
// data set starts from: the papers' DIGITS settings (DPD §5 and DPVD §5:
// lot 100, 500 hidden units, C = 2, 100 epochs) for "digits", Abadi et
// al. §5.2's MNIST settings (lot 600, 1,000 hidden units, C = 4, 10
// epochs) otherwise. DP-SGD on DIGITS also gets a constant learning rate
// of 0.02: Abadi's MNIST schedule (0.1 → 0.052) reaches 0.76 there at ε = 1
// against 0.88 for 0.02 (4 seeds each; docs/training.md). Fields it leaves
// zero take [Config.WithDefaults].
func DatasetDefaults(dataset string, m Method) Config {
	if dataset == "digits" {
		c := Config{Hidden: []int{500}, LotSize: 100, ClipNorm: 2, Epochs: 100}
		if m == MethodDPSGD {
			c.LearningRate, c.LearningRateFinal = 0.02, 0.02
		}
		return c
	}
	return Config{Hidden: []int{1000}, LotSize: 600, ClipNorm: 4, Epochs: 10}
}

// FieldError reports an invalid Config field.
type FieldError struct {
	Field string
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("trainer: %s = %v, want %s", e.Field, e.Value, e.Want)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// WithDefaults returns a copy of c with zero fields set to the method's
// defaults. n is the training-set size (LotSize is clamped to it).
func (c Config) WithDefaults(n int) Config {
	if c.Method == "" {
		c.Method = MethodDPSGD
	}
	if c.Hidden == nil {
		c.Hidden = []int{1000}
	}
	c.Hidden = slices.Clone(c.Hidden) // keeps an explicit [] (no hidden layer) non-nil
	c.PerLayerClip = append([]float64(nil), c.PerLayerClip...)
	if c.LotSize == 0 {
		c.LotSize = 600
	}
	if n > 0 && c.LotSize > n {
		c.LotSize = n
	}
	if c.BatchSize == 0 || c.BatchSize > c.LotSize {
		c.BatchSize = c.LotSize
	}
	if c.Sampling == "" {
		if c.Method.Private() {
			c.Sampling = SamplingPoisson
		} else {
			c.Sampling = SamplingShuffle
		}
	}
	if c.Sampling == SamplingRandomAllocation && c.AllocationK == 0 {
		c.AllocationK = 1
	}
	if c.PCADim > 0 && c.PCASamplingRate == 0 {
		if c.Method.Private() {
			c.PCASamplingRate = 0.1
		} else {
			c.PCASamplingRate = 1
		}
	}
	if c.LearningRate == 0 {
		switch c.Method {
		case MethodDPD, MethodDPVD, MethodSGLD:
			c.LearningRate = 0.5
		default:
			c.LearningRate = 0.1
		}
	}
	if c.Method == MethodDPSGD {
		if c.LearningRateFinal == 0 {
			c.LearningRateFinal = 0.052
		}
		if c.DecayEpochs == 0 {
			c.DecayEpochs = 10
		}
	}
	if c.Gamma == 0 {
		c.Gamma = 1
	}
	if c.ClipNorm == 0 {
		c.ClipNorm = 4
	}
	if c.SGLDTemperature == 0 {
		c.SGLDTemperature = 1
	}
	if c.PriorPrecision == 0 {
		c.PriorPrecision = 1
	}
	if c.Canaries > 0 && c.CanaryKind == "" {
		c.CanaryKind = CanaryInput
	}
	return c
}

// Validate checks a defaulted config against a training set of n examples
// with d features. The error names the field and its valid range.
func (c *Config) Validate(n, d int) error {
	switch c.Method {
	case MethodNP, MethodDPSGD, MethodDPD, MethodDPVD, MethodSGLD:
	default:
		return &FieldError{"method", c.Method, "one of np, dpsgd, dpd, dpvd, sgld"}
	}
	if n < 1 || d < 1 {
		return &FieldError{"dataset", fmt.Sprintf("%d×%d", n, d), "at least 1 example and 1 feature"}
	}
	if len(c.Hidden) > 16 {
		return &FieldError{"hidden", c.Hidden, "at most 16 hidden layers"}
	}
	for i, h := range c.Hidden {
		if h < 1 || h > 1<<16 {
			return &FieldError{fmt.Sprintf("hidden[%d]", i), h, "in [1, 65536]"}
		}
	}
	if c.PCADim < 0 || c.PCADim > d {
		return &FieldError{"pca_dim", c.PCADim, fmt.Sprintf("in [0, %d] (0 = no projection)", d)}
	}
	if c.PCADim > 0 && c.Sampling == SamplingShuffle && c.Method.Private() {
		return &FieldError{"pca_dim", c.PCADim, "0 with shuffled lots: DP-PCA's Poisson sample has no bound under the replace-one adjacency shuffled lots are accounted under"}
	}
	if c.PCADim > 0 {
		if !finite(c.PCASamplingRate) || c.PCASamplingRate <= 0 || c.PCASamplingRate > 1 {
			return &FieldError{"pca_sampling_rate", c.PCASamplingRate, "in (0, 1]"}
		}
		if c.Method.Private() && (!finite(c.PCANoiseMultiplier) || c.PCANoiseMultiplier <= 0) {
			return &FieldError{"pca_noise_multiplier", c.PCANoiseMultiplier, "finite and > 0 for a private method"}
		}
	}
	if c.LotSize < 1 || c.LotSize > n {
		return &FieldError{"lot_size", c.LotSize, fmt.Sprintf("in [1, %d]", n)}
	}
	if c.BatchSize < 1 || c.BatchSize > c.LotSize {
		return &FieldError{"batch_size", c.BatchSize, fmt.Sprintf("in [1, lot_size=%d]", c.LotSize)}
	}
	if c.Epochs < 1 || c.Epochs > 1<<20 {
		return &FieldError{"epochs", c.Epochs, "in [1, 1048576]"}
	}
	if c.Sampling == SamplingTruncatedPoisson {
		if c.MaxLotSize < 1 || c.MaxLotSize > n {
			return &FieldError{"max_lot_size", c.MaxLotSize, fmt.Sprintf("in [1, %d] with sampling truncated-poisson", n)}
		}
	} else if c.MaxLotSize != 0 {
		return &FieldError{"max_lot_size", c.MaxLotSize, "0 with sampling " + string(c.Sampling) + " (the cap is for truncated-poisson)"}
	}
	switch c.Sampling {
	case SamplingPoisson, SamplingShuffle, SamplingTruncatedPoisson:
		if c.AllocationK != 0 {
			return &FieldError{"allocation_k", c.AllocationK, "0 with sampling " + string(c.Sampling) + " (k is for random-allocation)"}
		}
	case SamplingBallsInBins:
		if c.AllocationK != 0 && c.AllocationK != 1 {
			return &FieldError{"allocation_k", c.AllocationK, "1 with balls-in-bins (random-allocation takes other k)"}
		}
	case SamplingRandomAllocation:
		if c.AllocationK < 1 || c.AllocationK > maxAllocation/n {
			return &FieldError{"allocation_k", c.AllocationK, fmt.Sprintf("in [1, %d] (k·N at most %d)", max(1, maxAllocation/n), maxAllocation)}
		}
	default:
		return &FieldError{"sampling", c.Sampling, "poisson, shuffle, truncated-poisson, random-allocation or balls-in-bins"}
	}
	if c.ExamplesPerUser < 0 || c.ExamplesPerUser > accounting.MaxExamplesPerUser {
		return &FieldError{"examples_per_user", c.ExamplesPerUser, "in [1, 2^53] (0: 1, example level)"}
	}
	if c.ExamplesPerUser > 1 && c.Method.Private() {
		if c.Sampling != SamplingPoisson {
			return &FieldError{"examples_per_user", c.ExamplesPerUser, "1 with sampling " + string(c.Sampling) + " (user-level privacy is accounted for poisson sampling only)"}
		}
		if c.Canaries > 0 {
			return &FieldError{"examples_per_user", c.ExamplesPerUser, "1 with canaries (the one-run audit bounds example-level ε)"}
		}
		if _, err := accounting.UserMixture(1, c.SamplingRate(n), c.ExamplesPerUser); err != nil {
			var pe *accounting.ParamError
			if errors.As(err, &pe) {
				return &FieldError{"examples_per_user", c.ExamplesPerUser, pe.Want}
			}
			return err
		}
		if c.PCADim > 0 {
			if _, err := accounting.UserMixture(1, c.PCASamplingRate, c.ExamplesPerUser); err != nil {
				return &FieldError{"examples_per_user", c.ExamplesPerUser, "a count whose DP-PCA sample's Binomial(k, pca_sampling_rate) has at most 1024 likely values"}
			}
		}
	}
	if !finite(c.LearningRate) || c.LearningRate <= 0 {
		return &FieldError{"learning_rate", c.LearningRate, "finite and > 0"}
	}
	if c.Method == MethodDPSGD {
		if !finite(c.LearningRateFinal) || c.LearningRateFinal <= 0 {
			return &FieldError{"learning_rate_final", c.LearningRateFinal, "finite and > 0"}
		}
		if c.DecayEpochs < 0 {
			return &FieldError{"decay_epochs", c.DecayEpochs, ">= 0"}
		}
	}
	if !finite(c.Gamma) || c.Gamma < 0 {
		return &FieldError{"gamma", c.Gamma, "finite and >= 0"}
	}
	if len(c.PerLayerClip) > 0 {
		if len(c.PerLayerClip) != len(c.Hidden)+1 {
			return &FieldError{"per_layer_clip", c.PerLayerClip, fmt.Sprintf("%d entries (one per dense layer)", len(c.Hidden)+1)}
		}
		for i, cl := range c.PerLayerClip {
			if !finite(cl) || cl <= 0 {
				return &FieldError{fmt.Sprintf("per_layer_clip[%d]", i), cl, "finite and > 0"}
			}
		}
	} else if !finite(c.ClipNorm) || c.ClipNorm <= 0 {
		return &FieldError{"clip_norm", c.ClipNorm, "finite and > 0"}
	}
	if c.Method.Private() {
		if !finite(c.NoiseMultiplier) || c.NoiseMultiplier <= 0 {
			return &FieldError{"noise_multiplier", c.NoiseMultiplier, "finite and > 0 for a private method"}
		}
	}
	if c.TargetEpsilon != 0 {
		if !c.Method.Private() {
			return &FieldError{"target_epsilon", c.TargetEpsilon, "0 for method np (it has no privacy)"}
		}
		if !finite(c.TargetEpsilon) || c.TargetEpsilon < 0 {
			return &FieldError{"target_epsilon", c.TargetEpsilon, "finite and > 0"}
		}
		if !finite(c.TargetDelta) || c.TargetDelta <= 0 || c.TargetDelta >= 1 {
			return &FieldError{"target_delta", c.TargetDelta, "in (0, 1)"}
		}
	}
	if !finite(c.SGLDTemperature) || c.SGLDTemperature < 0 {
		return &FieldError{"sgld_temperature", c.SGLDTemperature, "finite and >= 0"}
	}
	if !finite(c.PriorPrecision) || c.PriorPrecision < 0 {
		return &FieldError{"prior_precision", c.PriorPrecision, "finite and >= 0"}
	}
	if c.Canaries < 0 || c.Canaries > 1<<20 {
		return &FieldError{"canaries", c.Canaries, "in [0, 1048576] (0 = no audit)"}
	}
	if c.Canaries > 0 {
		if c.CanaryKind != CanaryInput && c.CanaryKind != CanaryGradient {
			return &FieldError{"canary_kind", c.CanaryKind, "input or gradient"}
		}
		if c.PCADim > 0 {
			return &FieldError{"pca_dim", c.PCADim, "0 with canaries (DP-PCA would need the canaries in its sample; not supported)"}
		}
		if c.allocated() || c.Sampling == SamplingTruncatedPoisson {
			return &FieldError{"sampling", c.Sampling, "poisson with canaries (the canaries' inclusion bits are Poisson draws of the lots)"}
		}
		if c.Sampling == SamplingShuffle && c.Method.Private() {
			return &FieldError{"sampling", c.Sampling, "poisson with canaries (the one-run audit bounds ε under add/remove, which shuffled lots are not accounted under)"}
		}
	}
	// The derived sensitivity and noise scale must be finite too: σ and C
	// finite on their own can still overflow in √Σ C_l² or factor·σ·S.
	if s := c.Sensitivity(); !finite(s) {
		if len(c.PerLayerClip) > 0 {
			return &FieldError{"per_layer_clip", c.PerLayerClip, "values whose root sum of squares is finite"}
		}
		return &FieldError{"clip_norm", c.ClipNorm, "finite"}
	}
	if c.Method.Private() && !finite(c.Method.noiseFactor()*c.NoiseMultiplier*c.Sensitivity()) {
		return &FieldError{"noise_multiplier", c.NoiseMultiplier, "small enough that the noise std (noise_multiplier × sensitivity) is finite"}
	}
	return nil
}

// StepsPerEpoch is ceil(n/LotSize).
//
// For a private method with shuffled lots it is ⌊n/LotSize⌋: the partial lot
// is dropped, as in the Shuffled event. With random allocation it is the
// epoch's t = ⌈k·n/LotSize⌉, so a lot holds k·n/t ≤ LotSize examples on
// average (dpcalc eps's t for --batch LotSize --n n --k k).
func (c *Config) StepsPerEpoch(n int) int {
	if c.Sampling == SamplingShuffle && c.Method.Private() {
		return max(1, n/c.LotSize)
	}
	if c.allocated() {
		k := max(1, c.allocK())
		return (k*n + c.LotSize - 1) / c.LotSize
	}
	return (n + c.LotSize - 1) / c.LotSize
}

// Adjacency is the neighbouring relation the run's events are stated
// under: replace-one for shuffled lots of a private method (a shuffled epoch
// has a bound only under it; see accounting.Plan.Bounded), add-remove
// otherwise. Accountants for the run are made with it.
func (c *Config) Adjacency() accounting.Adjacency {
	if c.Sampling == SamplingShuffle && c.Method.Private() {
		return accounting.ReplaceOne
	}
	return accounting.AddRemove
}

// LedgerUnit is the number of steps one ledger entry of StepEvent pays for:
// 1 for Poisson sampling, StepsPerEpoch(n) for shuffled lots or random
// allocation of a private method (an epoch is one Shuffled or
// RandomAllocation event, paid before its first lot).
func (c *Config) LedgerUnit(n int) int {
	if (c.Sampling == SamplingShuffle || c.allocated()) && c.Method.Private() {
		return c.StepsPerEpoch(n)
	}
	return 1
}

// TotalSteps is Epochs·StepsPerEpoch(n).
func (c *Config) TotalSteps(n int) int { return c.Epochs * c.StepsPerEpoch(n) }

// SamplingRate is q = LotSize/n; with random allocation, k/t (an
// example's share of an epoch's steps, as dpcalc eps reports it).
func (c *Config) SamplingRate(n int) float64 {
	if c.allocated() {
		return float64(max(1, c.allocK())) / float64(c.StepsPerEpoch(n))
	}
	return float64(c.LotSize) / float64(n)
}

// Sensitivity is the add/remove L2 sensitivity of the summed clipped
// gradient: C for flat clipping, √Σ C_l² for per-layer clipping.
func (c *Config) Sensitivity() float64 {
	if len(c.PerLayerClip) == 0 {
		return c.ClipNorm
	}
	s := 0.0
	for _, cl := range c.PerLayerClip {
		s += cl * cl
	}
	return math.Sqrt(s)
}

// EffectiveNoiseMultiplier is the noise std divided by the sensitivity: σ
// for dpsgd, 2σ for dpd, dpvd and sgld, 0 for np. See [StepEvent].
func (c *Config) EffectiveNoiseMultiplier() float64 {
	return c.Method.noiseFactor() * c.NoiseMultiplier
}

// StepEvent is the event the ledger records for one [Config.LedgerUnit] of
// steps: PoissonSampled{q, Gaussian{σ_eff}} per step, Shuffled{n, LotSize,
// Gaussian{σ_eff/2}} per epoch of shuffled lots (under replace-one, see
// [Config.Adjacency]), RandomAllocation{k, t, Gaussian{σ_eff}} per epoch of
// random allocation, TruncatedSubsampledGaussian{N, q, MaxLotSize, σ_eff}
// per step of truncated Poisson lots, or NonPrivate for np.
//
// σ_eff is the noise std divided by the add/remove L2 sensitivity of the
// summed clipped gradient. With every example's (whole) gradient clipped to
// norm ≤ C, adding or removing one example changes the sum by a vector of
// norm ≤ C, so S = C. The DPD/DPVD papers add N(0, 4C²σ²) and call the
// sensitivity 2C, which is the replace-one bound (one example's clipped
// gradient swapped for another's moves the sum by ≤ 2C); under the add/remove
// relation that our accountants assume, the same noise gives σ_eff = 2Cσ/C =
// 2σ. Reporting 2σ is exact for add/remove; it is not the paper's reading
// (σ under replace-one), and the two give different ε.
func (c *Config) StepEvent(n int) accounting.Event {
	if !c.Method.Private() {
		return accounting.NonPrivate{}
	}
	if c.Sampling == SamplingShuffle {
		// Under replace-one the clipped sum's sensitivity is 2S, so the
		// noise multiplier is σ_eff/2 ([Config.Adjacency]).
		return accounting.Shuffled{DatasetSize: n, BatchSize: c.LotSize,
			Event: accounting.Gaussian{NoiseMultiplier: c.EffectiveNoiseMultiplier() / 2}}
	}
	if c.allocated() {
		return accounting.RandomAllocation{NumSelected: c.allocK(), NumSteps: c.StepsPerEpoch(n),
			Event: accounting.Gaussian{NoiseMultiplier: c.EffectiveNoiseMultiplier()}}
	}
	if c.ExamplesPerUser > 1 {
		return userStep(c.EffectiveNoiseMultiplier(), c.SamplingRate(n), c.ExamplesPerUser)
	}
	if c.Sampling == SamplingTruncatedPoisson {
		return accounting.TruncatedSubsampledGaussian{DatasetSize: n, SamplingRate: c.SamplingRate(n),
			TruncatedBatchSize: c.MaxLotSize, NoiseMultiplier: c.EffectiveNoiseMultiplier()}
	}
	return accounting.PoissonSampled{
		SamplingRate: c.SamplingRate(n),
		Event:        accounting.Gaussian{NoiseMultiplier: c.EffectiveNoiseMultiplier()},
	}
}

// userStep is the user-level step of [Config.StepEvent] and
// [Config.PCAEvent]: accounting.UserMixture(σ, q, k), or NonPrivate (no
// finite bound: the safe side) should it be refused, which Validate
// rules out.
func userStep(sigma, q float64, k int) accounting.Event {
	m, err := accounting.UserMixture(sigma, q, k)
	if err != nil {
		return accounting.NonPrivate{}
	}
	return m
}

// PCAEvent is the DP-PCA event: PoissonSampled{q_p, Gaussian{σ_p}}, since
// each L2-normalised example x contributes xxᵀ, whose upper triangle has
// Frobenius norm ≤ ‖x‖² = 1. For np it is NonPrivate; without PCA, nil.
func (c *Config) PCAEvent() accounting.Event {
	if c.PCADim == 0 {
		return nil
	}
	if !c.Method.Private() {
		return accounting.NonPrivate{}
	}
	if c.ExamplesPerUser > 1 {
		return userStep(c.PCANoiseMultiplier, c.PCASamplingRate, c.ExamplesPerUser)
	}
	return accounting.PoissonSampled{
		SamplingRate: c.PCASamplingRate,
		Event:        accounting.Gaussian{NoiseMultiplier: c.PCANoiseMultiplier},
	}
}

// RunEvent is the event of the whole planned run on n examples: the DP-PCA
// event (if any) followed by TotalSteps(n)/LedgerUnit(n) repetitions of
// StepEvent(n). A
// calibrator finds σ by varying NoiseMultiplier on a defaulted copy of the
// config and accounting RunEvent; note that dpd, dpvd and sgld report 2σ per
// step (see [Config.StepEvent]), which RunEvent already includes.
func (c *Config) RunEvent(n int) accounting.Event {
	steps := accounting.SelfComposed{Event: c.StepEvent(n), Count: c.TotalSteps(n) / c.LedgerUnit(n)}
	if pca := c.PCAEvent(); pca != nil {
		return accounting.Composed{Events: []accounting.Event{pca, steps}}
	}
	return steps
}
