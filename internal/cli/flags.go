package cli

import (
	"errors"
	"fmt"
	"github.com/dpcalc/dpcalc/internal/sysmem"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
)

// Count is an integer flag that also accepts exponent notation with an
// integral value (--steps 1e6).
type Count int

// Decode implements kong.MapperValue.
func (c *Count) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("value", &s); err != nil {
		return err
	}
	n, err := ParseCount(s)
	if err != nil {
		return fmt.Errorf("invalid %s", err)
	}
	*c = Count(n)
	return nil
}

// plainFloat decodes float flags with [ParseFloat]: kong's decoder
// (strconv.ParseFloat) also reads "1_0" as 10 and "0x1p-3" as 0.125.
func plainFloat(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("float")
	if err != nil {
		return err
	}
	v, ok := t.Value.(string)
	if !ok {
		v = fmt.Sprint(t.Value)
	}
	x, err := ParseFloat(v)
	if err != nil {
		return err
	}
	target.SetFloat(x)
	return nil
}

// ParseFloat parses a float flag: a plain decimal number (0.5, 2e-3, 1e400
// is out of range), or inf or nan in any spelling strconv reads, which the
// flag's own check then names. Underscores and hex floats, which
// strconv.ParseFloat also reads ("1_0" as 10, "0x1p-3" as 0.125), are
// refused.
func ParseFloat(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("expected a float but got %q (string)", s)
	case !plainNumber(s) && accounting.Finite(x):
		return 0, fmt.Errorf("expected a plain decimal number such as 0.5 or 2e-3 but got %q (no underscores or hex)", s)
	}
	return x, nil
}

// ParseCount parses a whole number written as 1000000 or 1e6 (--steps).
func ParseCount(s string) (int, error) {
	if !plainNumber(s) {
		return 0, fmt.Errorf("value %q, want a whole number such as 20000 or 2e4", s)
	}
	if n, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("value %q, want a whole number such as 20000 or 2e4", s)
	}
	return int(f), nil
}

// plainNumber reports whether s is a plain decimal number, optionally
// signed, with an optional fraction and exponent: 5000, 0.01, -1, 2e-3,
// 1.5E+4. strconv.ParseFloat also reads "1_0" (10), "0x1p-3" (0.125),
// "inf" and "nan", which no schedule means.
func plainNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	d := digits()
	if i < len(s) && s[i] == '.' {
		i++
		d += digits()
	}
	if d == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// lengthFlags give the training length, as epochs or steps. Exactly one is
// required; kong enforces that (a required xor group).
type lengthFlags struct {
	Q      float64  `name:"q" required:"" help:"Sampling rate q = L/N: each record's inclusion probability per step, in (0, 1]."`
	Epochs *float64 `name:"epochs" xor:"length" required:"" help:"Expected passes over the data E; steps T = ⌈E/q⌉."`
	Steps  *Count   `name:"steps" xor:"length" required:"" help:"Number of steps T, instead of --epochs; 1e6 is accepted."`
}

// steps validates q and returns T.
func (l *lengthFlags) steps() (int, error) {
	if err := flagErr(accounting.CheckSamplingRate(l.Q)); err != nil {
		return 0, err
	}
	switch {
	case l.Steps != nil:
		if *l.Steps < 1 {
			return 0, usageAt("steps", "invalid --steps: %d, want an integer >= 1", *l.Steps)
		}
		return int(*l.Steps), nil
	case l.Epochs != nil:
		t, err := calibrate.StepsForEpochs(*l.Epochs, l.Q)
		return t, flagErr(err)
	}
	return 0, usageAt("epochs", "missing --epochs or --steps: give the training length")
}

// accountantFlags choose the accountant(s).
type accountantFlags struct {
	Accountant string  `name:"accountant" default:"${default_accountant}" enum:"${accountants},all" help:"Accountant: ${accountant_list}, or all."`
	PLDGrid    float64 `name:"pld-grid" placeholder:"WIDTH" help:"Discretisation width of the pld accountant's privacy loss grid (default: adaptive)."`
	ACSampling string  `name:"ac-sampling" default:"log" enum:"log,linear" help:"How ac amplifies by sampling: log (proven, default) or linear (Abadi §3.1's (qε, qδ) reading; reproduces Abadi §5.1, not a proven bound)."`
}

// accountants are the flags as [Accountants] under adjacency adj.
func (a *accountantFlags) accountants(adj accounting.Adjacency) Accountants {
	return Accountants{Name: a.Accountant, PLDGrid: a.PLDGrid, ACSampling: a.ACSampling, Adjacency: adj}
}

// trainingFlags describe the training of eps, delta, sigma and epochs: one
// phase (--sigma, --q or --batch with --n, --epochs or --steps), a
// --schedule of phases, or (eps, delta) an --events file. None is required
// by kong: [trainingFlags.check] says what is missing with kong's message.
type trainingFlags struct {
	Q         *float64 `name:"q" help:"Sampling rate q = L/N: each record's inclusion probability per step, in (0, 1]."`
	Epochs    *float64 `name:"epochs" xor:"length" help:"Expected passes over the data E; steps T = ⌈E/q⌉."`
	Steps     *Count   `name:"steps" xor:"length" help:"Number of steps T, instead of --epochs; 1e6 is accepted."`
	Batch     *Count   `name:"batch" help:"Batch size B, instead of --q (with --n: q = B/N); needed by --sampling fixed and shuffle."`
	N         *Count   `name:"n" help:"Dataset size N (with --batch; the default n of --schedule phases)."`
	Schedule  *string  `name:"schedule" placeholder:"PHASES" help:"Phases run one after the other, instead of --sigma/--q/--batch/--epochs/--steps: \"sigma=1,q=0.01,steps=5000; sigma=2,batch=256,n=60000,epochs=3\" (keys sigma, q, batch, n, steps, epochs; one of sigma=?, steps=?, epochs=? for dpcalc sigma and epochs)."`
	Sampling  string   `name:"sampling" default:"poisson" enum:"poisson,fixed,shuffle,truncated-poisson,random-allocation,balls-in-bins,cyclic" help:"How batches are drawn: poisson (each record with probability q), fixed (B of N without replacement; needs --adjacency replace-one), shuffle (an epoch of shuffled batches), truncated-poisson (Poisson lots capped at --max-batch; needs --n), random-allocation (each record in --k of an epoch's steps), balls-in-bins (k = 1) or cyclic (Poisson at rate q from one of --bands groups in turn)."`
	MaxBatch  *Count   `name:"max-batch" placeholder:"B" help:"Largest lot of --sampling truncated-poisson: a Poisson lot of more records keeps a uniformly random B of them."`
	K         *Count   `name:"k" help:"With --sampling random-allocation: each record is used in k of the t steps of an epoch (t = --steps for one epoch, or ⌈k·N/B⌉ with --batch and --n)."`
	Bands     *Count   `name:"bands" help:"With --sampling cyclic: the number of groups b the data is split into; step i samples group i mod b."`
	Adjacency string   `name:"adjacency" default:"add-remove" enum:"add-remove,replace-one" help:"Neighbouring datasets: add or remove one record, or replace one (σ stays the noise over the clipping norm C; the events get σ/2, the sensitivity being 2C)."`
	// ExamplesPerUser is --examples-per-user (nil: example level).
	// GroupSize is --group-size (nil: 1).
	GroupSize       *Count `name:"group-size" placeholder:"G" help:"Group privacy: ε for datasets differing in up to G records (or G users with --examples-per-user; replaced records with --adjacency replace-one). Exact under Poisson sampling and add-remove (a group's records are sampled independently, as one user's examples are) and for unsampled noise; otherwise the group privacy lemma, (Gε, δ·Σ_{i<G} e^{iε}), on each accountant's single-record bound: an upper bound, not tight (docs/sampling.md)."`
	ExamplesPerUser *Count `name:"examples-per-user" placeholder:"K" help:"User-level privacy: ε for adding or removing one user with all their examples, each user contributing at most K (K = 1: example level, the default). Poisson sampling under add-remove; accountants pld, rdp and zcdp."`
}

// eventFlags read and write the training as dp_accounting DpEvent JSON,
// or read it from another tool's ledger.
type eventFlags struct {
	Events     string `name:"events" placeholder:"FILE" xor:"file" help:"Read the training from FILE (- for stdin): dp_accounting DpEvent JSON (docs/events.md), instead of the training flags."`
	Ledger     string `name:"ledger" placeholder:"FILE" xor:"file" help:"Read the training from a ledger FILE (- for stdin), instead of the training flags: a dpcalc training ledger, an Opacus accountant state or a dp_accounting DpEvent, detected from its contents (docs/events.md)."`
	EmitEvents string `name:"emit-events" placeholder:"FILE" help:"Write the training as dp_accounting DpEvent JSON to FILE (- for stdout, instead of the table), only if the command succeeds."`
	EmitFormat string `name:"emit-format" default:"dp_accounting" enum:"dp_accounting,compositions" help:"Format of --emit-events: dp_accounting (one DpEvent) or compositions (a composition ledger: schema_version 1, config, compositions of {event, count})."`
}

// readEventFile reads and checks the --events file name under the
// neighbouring relation adjacency (a flag value); nil when name is "".
func readEventFile(e *Env, name, adjacency string) (accounting.Event, error) {
	r, err := readTrainingFile(e, "events", name, adjacency)
	return r.Event, err
}

// readTrainingFile reads and checks the file name of flag ("events":
// dp_accounting DpEvent JSON; "ledger": any format accounting.ReadLedgerFile
// detects) under the neighbouring relation adjacency (a flag value); the
// zero value when name is "".
func readTrainingFile(e *Env, flag, name, adjacency string) (accounting.LedgerRead, error) {
	if name == "" {
		return accounting.LedgerRead{}, nil
	}
	adj, err := accounting.ParseAdjacency(adjacency)
	if err != nil {
		return accounting.LedgerRead{}, Usagef("%v", err)
	}
	b, err := readEvents(flag, name, e.Stdin)
	if err != nil {
		return accounting.LedgerRead{}, err
	}
	var r accounting.LedgerRead
	if flag == "events" {
		r.Format, r.Description = accounting.FormatDPEvent, "dp_accounting DpEvent"
		r.Event, err = accounting.UnmarshalEventContext(e.Ctx, b)
	} else {
		r, err = accounting.ReadLedgerFile(e.Ctx, name, b, adj)
	}
	if err != nil && e.Ctx.Err() != nil && errors.Is(err, e.Ctx.Err()) {
		return accounting.LedgerRead{}, err // interrupted (exit 130)
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "accounting: ")
		msg = strings.TrimPrefix(msg, "ledger file "+name+": ")
		return accounting.LedgerRead{}, usageAt(flag, "--%s %s: %s", flag, name, msg)
	}
	if _, err := accounting.NormalizeUnder(adj, r.Event, 1); err != nil {
		return accounting.LedgerRead{}, usageAt(flag, "--%s %s: %s", flag, name, strings.TrimPrefix(err.Error(), "accounting: "))
	}
	return r, nil
}

// readEvents reads the file of flag ("events" or "ledger"; stdin for
// "-"), refusing one larger than accounting.MaxEventJSONBytes (64 MiB)
// before reading it when its size is known, else as soon as the limit is
// passed.
func readEvents(flag, name string, stdin io.Reader) ([]byte, error) {
	const max = accounting.MaxEventJSONBytes
	tooBig := func(what string) error {
		return usageAt(flag, "--%s %s: %s; --%s reads at most 64 MiB (%d bytes)", flag, name, what, flag, max)
	}
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageAt(flag, "--%s: %v", flag, err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > max {
				return nil, tooBig(fmt.Sprintf("%d bytes", fi.Size()))
			}
			// The decoded events and their plan take about 8 bytes per
			// byte of JSON (100,000 phases: 23 MB of JSON, 170 MB).
			if err := sysmem.Check(8*float64(fi.Size()), "--"+flag+" "+name+": decoding it",
				"the number of events in the file (repeated phases can be one SelfComposedDpEvent with a count)"); err != nil {
				return nil, usageAt(flag, "%v", err)
			}
		}
		r = f
	}
	if r == nil {
		return nil, usageAt(flag, "--%s %s: there is no standard input here", flag, name)
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, usageAt(flag, "--%s: %v", flag, err)
	}
	if len(b) > max {
		return nil, tooBig(fmt.Sprintf("more than %d bytes", max))
	}
	return b, nil
}
