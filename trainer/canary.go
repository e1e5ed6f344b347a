package trainer

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"

	"github.com/dpcalc/dpcalc/calibrate/onerun"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// CanaryKind names how audit canaries enter training (see [Config.Canaries]).
type CanaryKind string

const (
	// CanaryInput canaries are out-of-distribution examples: images whose
	// features are each 0 or 1 with probability ½, with a label drawn
	// uniformly, so only memorisation can fit them. They are sampled,
	// clipped and noised like every other example. An auditor who sees
	// only the final model (black box) scores each one by its negated
	// cross-entropy loss. This is the threat model of an ordinary data
	// contributor, and the bound it gives is usually far below the
	// certified ε.
	CanaryInput CanaryKind = "input"
	// CanaryGradient canaries are Dirac gradient canaries (Steinke, Nasr
	// and Jagielski 2023, white-box setting): when canary i is in a lot, the gradient
	// C·e_{j_i} (norm C, the clipping norm, so clipping leaves it whole) is
	// added to the clipped sum before the noise, as if an example had
	// that gradient. The coordinates j_i are distinct first-layer weights,
	// taken where possible on input features that are 0 in every training
	// example, whose data gradient is exactly 0. The auditor knows the
	// initial weights (white box) and scores canary i by θ_{j_i}(0) −
	// θ_{j_i}(final), the distance the weight moved against the canary's
	// gradient. Only an adversary who can insert arbitrary gradients into
	// DP-SGD, such as a participant of federated learning, has this
	// power; it is the threat model DP-SGD's analysis covers, so the
	// bound is close to the certified ε when the model is private.
	CanaryGradient CanaryKind = "gradient"
)

// canarySet holds a run's canaries: slots [base, base+m) of the training
// set, of which those with member[i] set are in the data.
type canarySet struct {
	kind   CanaryKind
	base   int
	member []bool
	// gradient canaries
	coords []int     // flat parameter index (layer 0 weights)
	init   []float32 // parameter value at initialisation
	mag    float32   // the canary gradient's norm
	dead   int       // coordinates on inputs that are 0 in every example
	// input canaries: rows [base, base+m) of the augmented data set
}

// newCanarySource returns the canaries' random stream, kept apart from the
// training stream: seeded from crypto/rand when seed is nil, else from
// SHA-256("dpcalc/canaries" ‖ seed).
func newCanarySource(seed *uint64) (*mrand.ChaCha8, error) {
	var key [32]byte
	if seed == nil {
		if _, err := rand.Read(key[:]); err != nil {
			return nil, fmt.Errorf("trainer: seeding the canaries from crypto/rand: %w", err)
		}
	} else {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], *seed)
		key = sha256.Sum256(append([]byte("dpcalc/canaries"), b[:]...))
	}
	return mrand.NewChaCha8(key), nil
}

// withCanaries returns train followed by m canary rows and the canary set
// (inclusion bits drawn first, then the input canaries' contents, from the
// canary stream, which it returns for placing gradient canaries). For gradient canaries the rows are zero placeholders that
// are never read: a lot's gradient canaries are added by the step.
func withCanaries(cfg *Config, train *data.Dataset) (*data.Dataset, *canarySet, *mrand.Rand, error) {
	m := cfg.Canaries
	src, err := newCanarySource(cfg.CanarySeed)
	if err != nil {
		return nil, nil, nil, err
	}
	rng := mrand.New(src)
	cs := &canarySet{kind: cfg.CanaryKind, base: train.N, member: make([]bool, m)}
	for i := range cs.member {
		cs.member[i] = rng.Uint64()&1 == 1
	}
	aug := &data.Dataset{Name: train.Name + "+canaries", N: train.N + m, D: train.D, Classes: train.Classes}
	aug.X = append(make([]float32, 0, aug.N*aug.D), train.X...)
	aug.Y = append(make([]uint8, 0, aug.N), train.Y...)
	aug.X = aug.X[:aug.N*aug.D]
	aug.Y = aug.Y[:aug.N]
	if cs.kind == CanaryInput {
		for i := 0; i < m; i++ {
			row := aug.X[(train.N+i)*aug.D : (train.N+i+1)*aug.D]
			for j := range row {
				row[j] = float32(rng.Uint64() & 1)
			}
			aug.Y[train.N+i] = uint8(rng.IntN(train.Classes))
		}
	}
	return aug, cs, rng, nil
}

// placeGradientCanaries picks the gradient canaries' coordinates among
// model's first-layer weights (on always-zero input features first, in a
// random order from rng) and records their initial values.
func (cs *canarySet) placeGradientCanaries(model *MLP, base *data.Dataset, cfg *Config, rng *mrand.Rand) error {
	l := model.Layers[0]
	dead := make([]bool, base.D)
	for j := range dead {
		dead[j] = true
	}
	for i := 0; i < base.N; i++ {
		for j, v := range base.Row(i) {
			if v != 0 {
				dead[j] = false
			}
		}
	}
	var onDead, onLive []int
	for j := 0; j < l.In; j++ {
		for u := 0; u < l.Out; u++ {
			if dead[j] {
				onDead = append(onDead, j*l.Out+u)
			} else {
				onLive = append(onLive, j*l.Out+u)
			}
		}
	}
	m := len(cs.member)
	if m > len(onDead)+len(onLive) {
		return &FieldError{"canaries", m, fmt.Sprintf("at most %d gradient canaries (first-layer weights)", len(onDead)+len(onLive))}
	}
	rng.Shuffle(len(onDead), func(a, b int) { onDead[a], onDead[b] = onDead[b], onDead[a] })
	rng.Shuffle(len(onLive), func(a, b int) { onLive[a], onLive[b] = onLive[b], onLive[a] })
	cs.coords = append(append([]int(nil), onDead...), onLive...)[:m]
	cs.dead = min(m, len(onDead))
	cs.init = make([]float32, m)
	for i, c := range cs.coords {
		cs.init[i] = l.W[c]
	}
	cs.mag = float32(cfg.ClipNorm)
	if len(cfg.PerLayerClip) > 0 {
		cs.mag = float32(cfg.PerLayerClip[0])
	}
	return nil
}

// filterLot drops absent canaries from lot and, for gradient canaries,
// moves the present ones into grads (their indices in the canary set); it
// returns the lot of examples to accumulate.
func (cs *canarySet) filterLot(lot []int, grads []int) ([]int, []int) {
	grads = grads[:0]
	out := lot[:0]
	for _, i := range lot {
		if i < cs.base {
			out = append(out, i)
			continue
		}
		k := i - cs.base
		if !cs.member[k] {
			continue
		}
		if cs.kind == CanaryGradient {
			grads = append(grads, k)
		} else {
			out = append(out, i)
		}
	}
	return out, grads
}

// scores returns every canary's audit score on model (higher: more likely
// a member) with its inclusion bit.
func (cs *canarySet) scores(model *MLP, ds *data.Dataset) []onerun.Canary {
	m := len(cs.member)
	out := make([]onerun.Canary, m)
	if cs.kind == CanaryGradient {
		w := model.Layers[0].W
		for i, c := range cs.coords {
			out[i] = onerun.Canary{Score: float64(cs.init[i]) - float64(w[c]), Member: cs.member[i]}
		}
		return out
	}
	const chunk = 256
	ws := newWorkspace(model, chunk)
	for s := 0; s < m; s += chunk {
		b := min(chunk, m-s)
		lo := cs.base + s
		model.forward(ws, ds.X[lo*ds.D:(lo+b)*ds.D], b, 0, nil)
		model.lossGrad(ws, ds.Y[lo:lo+b], b)
		for i := 0; i < b; i++ {
			out[s+i] = onerun.Canary{Score: -ws.loss[i], Member: cs.member[s+i]}
		}
	}
	return out
}

// AuditReport is the one-run audit of a run with canaries: the empirical
// lower bounds on ε at Delta (see package calibrate/onerun) and what they
// were computed from.
type AuditReport struct {
	Kind CanaryKind `json:"kind"`
	// DeadInputs is, for gradient canaries, how many sit on input features
	// that are 0 in every training example (the rest share their weight
	// with the data's gradients).
	DeadInputs int `json:"dead_inputs,omitempty"`
	onerun.Result
	// Scores are the canaries' scores and inclusion bits, in canary order.
	Scores []onerun.Canary `json:"-"`
}

// audit scores the canaries on the final model and bounds ε.
func (t *Trainer) audit() (*AuditReport, error) {
	cs := t.can
	sc := cs.scores(t.model, t.train)
	res, err := onerun.Audit(sc, onerun.Options{Confidence: t.opts.AuditConfidence, Delta: t.opts.ReportDelta})
	if err != nil {
		return nil, err
	}
	return &AuditReport{Kind: cs.kind, DeadInputs: cs.dead, Result: *res, Scores: sc}, nil
}

var errCanaryCheckpoint = errors.New("trainer: a run with canaries cannot be checkpointed or resumed (the canaries' inclusion bits are not saved)")
