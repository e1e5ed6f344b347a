package reproduce

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dpcalc/dpcalc/accounting"
	"github.com/dpcalc/dpcalc/calibrate"
	"github.com/dpcalc/dpcalc/trainer"
	"github.com/dpcalc/dpcalc/trainer/data"
)

// trainSizes are the training-split sizes the plan needs before a data set
// is loaded (checked against the loaded set in job runs): DIGITS' fixed
// split (data.DigitsTrainSize) and MNIST's 60,000 training images.
var trainSizes = map[string]int{"digits": data.DigitsTrainSize, "mnist": 60000}

// job is one training run: a data set and a complete, defaulted config
// (seed included). Identical jobs are run once.
type job struct {
	Dataset string         `json:"dataset"`
	Config  trainer.Config `json:"config"`
	// Noise names the trainer's noise generator, so cached runs made with
	// another generator (same seed, different noise) are not reused.
	Noise string  `json:"noise"`
	est   float64 // estimated seconds
	res   *runRecord
}

// runRecord is a finished run, as cached in OutDir/cache/run-*.json.
type runRecord struct {
	TestAccuracy  float64 `json:"test_accuracy"`
	TrainAccuracy float64 `json:"train_accuracy"`
	Steps         int     `json:"steps"`
	WallSeconds   float64 `json:"wall_seconds"`
}

func (j *job) key() any { return j }

// addJob registers the runs of cfg with seeds Seed, Seed+1, … and returns
// them; identical configs share jobs.
func (r *runner) addJobs(dataset string, cfg trainer.Config, runs int) []*job {
	var out []*job
	for i := 0; i < runs; i++ {
		c := cfg
		s := r.opt.Seed + uint64(i)
		c.Seed = &s
		j := &job{Dataset: dataset, Config: c, Noise: trainer.NoiseGenerator}
		found := false
		for _, o := range r.jobs {
			if o.Dataset == j.Dataset && sameConfig(o.Config, j.Config) {
				j, found = o, true
				break
			}
		}
		if !found {
			var rec runRecord
			if r.cache.get("run", j.key(), &rec) {
				j.res = &rec
			}
			r.jobs = append(r.jobs, j)
		}
		out = append(out, j)
	}
	return out
}

func sameConfig(a, b trainer.Config) bool {
	ka, _ := cacheKeyJSON(a)
	kb, _ := cacheKeyJSON(b)
	return ka == kb
}

// profileEpochs returns the epochs and runs of a cell on dataset whose paper
// setting is paperEpochs, or a reason why the cell is not run.
func (r *runner) profileEpochs(dataset string, paperEpochs int) (epochs, runs int, skip string) {
	if len(r.opt.Datasets) > 0 && !slices.Contains(r.opt.Datasets, dataset) {
		return 0, 0, fmt.Sprintf("not trained (--datasets %s)", strings.Join(r.opt.Datasets, ","))
	}
	switch r.opt.Profile {
	case ProfileTiny:
		if dataset != "digits" {
			return 0, 0, "not run (tiny profile: DIGITS only)"
		}
		return 1, 1, ""
	case ProfileQuick:
		if dataset == "mnist" {
			return min(paperEpochs, r.plan.MNISTEpochs), r.plan.MNISTRuns, ""
		}
		return paperEpochs, r.plan.DigitsRuns, ""
	}
	return paperEpochs, 10, ""
}

func epochsCell(run, paper int) string {
	if run == paper {
		return fmt.Sprint(run)
	}
	return fmt.Sprintf("%d of %d (reduced by profile)", run, paper)
}

// trainingSpecs builds the training tables' cells (calibrating every σ) and
// registers their jobs; in the quick profile it fits the plan to
// QuickBudget.
func (r *runner) trainingSpecs(ctx context.Context) ([]trainSpec, error) {
	r.plan = Plan{Profile: r.opt.Profile, StepSeconds: map[string]float64{}}
	switch r.opt.Profile {
	case ProfileTiny:
		r.plan.DigitsRuns = 1
	case ProfileQuick:
		r.plan.DigitsRuns, r.plan.MNISTRuns, r.plan.MNISTEpochs = 1, 1, 1
	case ProfileFull:
		r.plan.DigitsRuns, r.plan.MNISTRuns = 10, 10
	}
	build := func() ([]trainSpec, error) {
		r.jobs = nil
		var specs []trainSpec
		for _, p := range r.opt.Papers {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r.progress(Progress{Stage: "calibrate", Item: string(p)})
			switch p {
			case PaperAbadi:
				s, err := r.abadiMNISTSpec()
				if err != nil {
					return nil, err
				}
				specs = append(specs, s)
			case PaperDPD:
				specs = append(specs, r.table1Spec(dpdTable1))
			case PaperDPVD:
				specs = append(specs, r.table1Spec(dpvdTable1))
			}
		}
		return specs, nil
	}
	specs, err := build()
	if err != nil {
		return nil, err
	}
	if r.opt.Profile == ProfileQuick {
		if err := r.estimate(ctx); err != nil {
			return nil, err
		}
		if r.plan.Estimate > QuickBudget {
			r.plan.Notes = append(r.plan.Notes, fmt.Sprintf("quick: the estimate (%s) exceeds the %s budget at this machine's current speed (measured step cost in the plan; the budget assumes 2 otherwise idle cores). The profile is not cut further, so that its tables stay the same on every machine.", r.plan.Estimate.Round(time.Second), QuickBudget))
		}
		r.plan.Notes = append(r.plan.Notes, fmt.Sprintf("quick profile: DIGITS cells at the papers' settings with %d run per cell; MNIST cells with %d epoch and %d run per cell (the papers: their full epochs, 10 runs), marked in the tables.", r.plan.DigitsRuns, r.plan.MNISTEpochs, r.plan.MNISTRuns))
	}
	return specs, nil
}

// estimate measures the step cost of every data set with uncached jobs and
// sets r.plan's Runs, Cached and Estimate.
func (r *runner) estimate(ctx context.Context) error {
	r.plan.Runs, r.plan.Cached, r.plan.DatasetRuns = 0, 0, map[string]int{}
	need := map[string]bool{}
	for _, j := range r.jobs {
		if !r.inShard(j) {
			continue
		}
		r.plan.Runs++
		r.plan.DatasetRuns[j.Dataset]++
		if j.res != nil {
			r.plan.Cached++
		} else {
			need[j.Dataset] = true
		}
	}
	if r.opt.Shards > 0 {
		r.plan.Shard = fmt.Sprintf("%d/%d", r.opt.Shard, r.opt.Shards)
	}
	for _, ds := range []string{"digits", "mnist"} {
		if _, ok := r.plan.StepSeconds[ds]; ok || !need[ds] {
			continue
		}
		c, err := r.measure(ctx, ds)
		if err != nil {
			return err
		}
		r.plan.StepSeconds[ds] = c
	}
	var queue []float64
	for _, j := range r.uncached() {
		j.est = r.jobSeconds(j)
		queue = append(queue, j.est)
	}
	r.plan.Estimate = seconds(makespan(nil, queue, r.slots()))
	return nil
}

// slots is the number of runs trained at once (Options.Workers, at least
// 1).
func (r *runner) slots() int { return max(1, r.opt.Workers) }

// calibrationCopies is the number of runs measure trains at once to time a
// step: as many as will run together, up to the number of CPUs.
func (r *runner) calibrationCopies() int { return min(r.slots(), runtime.NumCPU()) }

// makespan is the wall time, in seconds, of running queue (run times, in
// the order the runs start) on slots workers that are busy for busy[i]
// more seconds first: each run starts on the first worker to be free. The
// plan's estimate and the progress lines' remaining time both come from
// it, so they agree.
func makespan(busy, queue []float64, slots int) float64 {
	free := make([]float64, max(slots, len(busy)))
	copy(free, busy)
	for _, t := range queue {
		i := 0
		for k := range free {
			if free[k] < free[i] {
				i = k
			}
		}
		free[i] += t
	}
	end := 0.0
	for _, f := range free {
		end = max(end, f)
	}
	return end
}

// seconds converts s seconds to a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// macs is the multiply-accumulates of one example's forward pass.
func macs(d, classes int, c *trainer.Config) float64 {
	in := d
	m := 0.0
	if c.PCADim > 0 {
		m += float64(d * c.PCADim)
		in = c.PCADim
	}
	for _, h := range c.Hidden {
		m += float64(in * h)
		in = h
	}
	return m + float64(in*classes)
}

// shapes of the data sets (features, classes, test size) for estimates.
var shapes = map[string][3]int{"digits": {64, 10, data.DigitsTestSize}, "mnist": {784, 10, 10000}}

// jobSeconds estimates a run's wall time while Options.Workers runs train
// at once: StepSeconds[ds] is the measured time per (example × forward
// MAC) of a training step (forward, backward, clipping, noise) with that
// many runs at once (up to the number of CPUs; more workers than CPUs
// share them); evaluation passes (test set every epoch, train set once)
// cost about a third of that per example.
func (r *runner) jobSeconds(j *job) float64 {
	sh := shapes[j.Dataset]
	n := trainSizes[j.Dataset]
	c := j.Config
	m := macs(sh[0], sh[1], &c)
	train := float64(c.TotalSteps(n)*c.LotSize) * m
	if c.Method == trainer.MethodDPVD {
		// The local reparameterisation trick adds a variance forward pass
		// (roughly 1.5× a dpd step on DIGITS; a noisy measurement under load).
		train *= 1.5
	}
	eval := float64(c.Epochs*sh[2]+n) * m / 3
	pca := 0.0
	if c.PCADim > 0 {
		// DP-PCA: the covariance of the q_p·N sample (one gemm) and a dense
		// symmetric eigendecomposition in pure Go, which runs far below
		// gemm speed; 30·D³ is its cost in gemm-MAC equivalents, fitted to
		// one measured MNIST run (D = 784).
		d := float64(sh[0])
		pca = c.PCASamplingRate*float64(n)*d*d + 30*d*d*d
	}
	share := float64(r.slots()) / float64(r.calibrationCopies())
	return r.plan.StepSeconds[j.Dataset] * share * (train + eval + pca)
}

// trainCalls counts the trainer runs started (step timing included); the
// tests read it to check that a refused reproduction trained nothing.
var trainCalls atomic.Int64

// measure times a short run at the data set's paper shape and returns
// seconds per (example × forward MAC). It trains calibrationCopies copies
// of it at once, as the real runs will train (the trainer's products use
// every core when a run has them to itself), and divides the wall time by
// one copy's work.
func (r *runner) measure(ctx context.Context, ds string) (float64, error) {
	var train *data.Dataset
	var err error
	if r.opt.PlanOnly {
		train = syntheticShape(ds)
	} else if train, _, err = r.loadData(ds); err != nil {
		return 0, err
	}
	seed := uint64(0)
	cfg := trainer.Config{Method: trainer.MethodDPD, Hidden: []int{1000}, LotSize: 100, Epochs: 1, ClipNorm: 2, NoiseMultiplier: 1, Seed: &seed}
	sub := train
	if ds == "mnist" {
		// Two steps of the MNIST shape (lot 600, 784-1000-10) on the first
		// 1,200 examples.
		cfg.LotSize = 600
		sub = &data.Dataset{Name: "mnist/sample", X: train.X[:1200*train.D], Y: train.Y[:1200], N: 1200, D: train.D, Classes: train.Classes}
	}
	cfg = cfg.WithDefaults(sub.N)
	copies := r.calibrationCopies()
	steps := make([]int, copies)
	errs := make([]error, copies)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range copies {
		trainCalls.Add(1)
		wg.Go(func() {
			res, err := trainer.Train(ctx, cfg, sub, nil, trainer.Options{})
			if err == nil {
				steps[i] = res.Steps
			}
			errs[i] = err
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	m := macs(sub.D, sub.Classes, &cfg)
	work := float64(steps[0]*cfg.LotSize)*m + float64(sub.N)*m/3
	return el / work, nil
}

// train runs every uncached job of this process (see [runner.inShard]),
// caching each as it finishes, on Options.Workers goroutines: the runs are
// independent, and one DIGITS-sized run keeps only one core busy. Its
// progress lines number the runs as they start (run k of Plan.Runs,
// cached runs first) and give the time left by the plan's estimator
// (makespan), scaled by how the finished runs compared with their
// estimates.
func (r *runner) train(ctx context.Context) error {
	total := r.plan.Runs
	done, cached := 0, 0
	var todo []*job
	for _, j := range r.jobs {
		if !r.inShard(j) {
			continue
		}
		if j.res != nil {
			done++
			cached++
		} else {
			todo = append(todo, j)
		}
	}
	// Load the data sets before the workers start (loadData is not safe
	// for concurrent use).
	for _, j := range todo {
		tr, _, err := r.loadData(j.Dataset)
		if err != nil {
			return err
		}
		if tr.N != trainSizes[j.Dataset] {
			return fmt.Errorf("reproduce: %s has %d training examples, the plan assumed %d", j.Dataset, tr.N, trainSizes[j.Dataset])
		}
	}
	var mu sync.Mutex // guards the counters below and r.progress
	slots := r.slots()
	scale := 1.0 // measured / estimated, of the finished runs
	spentEst, spent := 0.0, 0.0
	started := 0                    // todo[:started] have started
	running := map[*job]time.Time{} // start times of the runs in progress
	// remaining is the estimated wall time left (mu held).
	remaining := func() time.Duration {
		var busy []float64
		for j, t := range running {
			busy = append(busy, max(0, j.est*scale-time.Since(t).Seconds()))
		}
		var queue []float64
		for _, j := range todo[started:] {
			queue = append(queue, j.est*scale)
		}
		return seconds(makespan(busy, queue, slots))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *job)
	errs := make(chan error, slots)
	var wg sync.WaitGroup
	for range slots {
		wg.Go(func() {
			for j := range jobs {
				mu.Lock()
				started++
				run := cached + started
				running[j] = time.Now()
				r.progress(Progress{Stage: "train", Item: describeJob(j), Run: run, Done: done, Total: total, Cached: cached, Remaining: remaining()})
				mu.Unlock()
				progress := func(p trainer.Progress) {
					if p.Epochs > 1 && p.Step < p.TotalSteps {
						mu.Lock()
						r.progress(Progress{Stage: "train", Item: fmt.Sprintf("%s: epoch %d/%d", describeJob(j), p.Epoch, p.Epochs), Run: run, Done: done, Total: total, Cached: cached, Remaining: remaining()})
						mu.Unlock()
					}
				}
				rec, err := r.runJob(ctx, j, progress)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				mu.Lock()
				j.res = rec
				delete(running, j)
				done++
				spentEst += j.est
				spent += rec.WallSeconds
				if spentEst > 0 {
					scale = spent / spentEst
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, j := range todo {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.progress(Progress{Stage: "train", Item: "done", Done: done, Total: total, Cached: cached})
	return nil
}

// runJob trains j (resuming its checkpoint in the cache, if any) and caches
// its record.
func (r *runner) runJob(ctx context.Context, j *job, progress func(trainer.Progress)) (*runRecord, error) {
	tr, te := r.digitsTrain, r.digitsTest
	if j.Dataset == "mnist" {
		tr, te = r.mnistTrain, r.mnistTest
	}
	start := time.Now()
	item := describeJob(j)
	topt := trainer.Options{Progress: progress}
	// Long runs checkpoint every checkpointEvery epochs into the cache,
	// so an interrupted run resumes mid-way (the checkpoint carries the
	// random stream and the ledger, so the result is the same).
	var ckpt string
	if j.Config.Epochs >= 2*checkpointEvery {
		p, _, err := r.cache.path("ckpt", j.key())
		if err != nil {
			return nil, err
		}
		ckpt = strings.TrimSuffix(p, ".json") + ".ckpt"
		topt.CheckpointPath, topt.CheckpointEvery = ckpt, checkpointEvery
	}
	var res *trainer.Result
	var err error
	trainCalls.Add(1)
	if _, statErr := os.Stat(ckpt); ckpt != "" && statErr == nil {
		res, err = trainer.Resume(ctx, ckpt, tr, te, topt)
	} else {
		if ckpt != "" {
			if err := os.MkdirAll(filepath.Dir(ckpt), 0o755); err != nil {
				return nil, err
			}
		}
		res, err = trainer.Train(ctx, j.Config, tr, te, topt)
	}
	if err != nil {
		return nil, fmt.Errorf("reproduce: %s: %w", item, err)
	}
	rec := runRecord{TrainAccuracy: res.TrainAccuracy, Steps: res.Steps, WallSeconds: time.Since(start).Seconds()}
	if res.TestAccuracy != nil {
		rec.TestAccuracy = *res.TestAccuracy
	}
	if err := r.cache.put("run", j.key(), rec); err != nil {
		return nil, err
	}
	if ckpt != "" {
		_ = os.Remove(ckpt) // the run record supersedes it
	}
	return &rec, nil
}

// inShard reports whether j is one of this process's runs.
func (r *runner) inShard(j *job) bool {
	if len(r.opt.Datasets) > 0 && !slices.Contains(r.opt.Datasets, j.Dataset) {
		return false
	}
	if r.opt.Shards == 0 {
		return true
	}
	return jobShard(j, r.opt.Shards) == r.opt.Shard
}

// jobShard is 1 + FNV-1a(the job's cache key) mod n.
func jobShard(j *job, n int) int {
	_, k, err := cache{}.path("run", j.key())
	if err != nil {
		return 1
	}
	h := fnv.New64a()
	h.Write(k)
	return 1 + int(h.Sum64()%uint64(n))
}

// uncached returns the jobs with no cached result.
func (r *runner) uncached() []*job {
	var out []*job
	for _, j := range r.jobs {
		if j.res == nil && r.inShard(j) {
			out = append(out, j)
		}
	}
	return out
}

// checkpointEvery is the checkpoint interval (epochs) of long runs.
const checkpointEvery = 10

func describeJob(j *job) string {
	c := j.Config
	return fmt.Sprintf("%s %s σ=%.4g epochs=%d seed=%d", j.Dataset, c.Method, c.NoiseMultiplier, c.Epochs, *c.Seed)
}

// cell is one trained configuration (one σ) of a table row: its runs and
// the true ε of its run event.
type cell struct {
	sigma   sigmaResult
	jobs    []*job
	trueEps epsResult
	event   accounting.Event
}

// accuracy returns the mean and sample standard deviation of the runs' test
// accuracies.
func (c *cell) accuracy() (mean, std float64, n int) {
	var xs []float64
	for _, j := range c.jobs {
		if j.res != nil {
			xs = append(xs, j.res.TestAccuracy)
		}
	}
	n = len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n > 1 {
		for _, x := range xs {
			std += (x - mean) * (x - mean)
		}
		std = math.Sqrt(std / float64(n-1))
	}
	return mean, std, n
}

func (c *cell) accString(skip string) string {
	if skip != "" {
		return skip
	}
	if !c.sigma.ok() {
		return c.sigma.Err
	}
	m, s, n := c.accuracy()
	switch n {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("%.4f (1 run)", m)
	}
	return fmt.Sprintf("%.4f ± %.4f (%d runs)", m, s, n)
}

func (c *cell) seeds() string {
	var s []string
	for _, j := range c.jobs {
		s = append(s, fmt.Sprint(*j.Config.Seed))
	}
	return strings.Join(s, ";")
}

// trueEpsString is the true ε cell: the sound accountant's upper bound.
func (c *cell) trueEpsString(skip string) string {
	if skip != "" || !c.sigma.ok() {
		return "-"
	}
	if c.trueEps.Err != "" {
		return c.trueEps.Err
	}
	return fUp(c.trueEps.Epsilon)
}

// runConfig returns cfg at noise multiplier sigma.
func withSigma(cfg trainer.Config, sigma float64) trainer.Config {
	cfg.NoiseMultiplier = sigma
	return cfg
}

// makeCell registers the runs of cfg at σ and computes the true ε of its
// run event under the sound accountant.
func (r *runner) makeCell(dataset string, cfg trainer.Config, s sigmaResult, runs int, delta float64) *cell {
	c := &cell{sigma: s}
	if !s.ok() {
		return c
	}
	n := trainSizes[dataset]
	rc := withSigma(cfg, s.Sigma)
	c.event = rc.RunEvent(n)
	if k := r.acc.sound(); k != "" {
		c.trueEps = r.epsilon(k, c.event, delta)
	} else {
		c.trueEps = epsResult{Epsilon: math.NaN(), Err: NotBuilt}
	}
	c.jobs = r.addJobs(dataset, rc, runs)
	return c
}

// soundSigma calibrates cfg's σ against its whole run event
// (trainer.Config.RunEvent) under the sound accountant.
func (r *runner) soundSigma(dataset string, cfg trainer.Config, eps, delta float64) sigmaResult {
	k := r.acc.sound()
	if k == "" {
		return sigmaResult{Sigma: math.NaN(), Err: NotBuilt}
	}
	n := trainSizes[dataset]
	return r.calibrateSigma(k, func(s float64) accounting.Event {
		c := withSigma(cfg, s) // addressable: RunEvent may have a pointer receiver
		return c.RunEvent(n)
	}, eps, delta)
}

// paperSigma applies the paper's own procedure (accountant kind) to the run
// as the trainer makes it: q = S/N, T = epochs·⌈N/S⌉.
func (r *runner) paperSigma(k accounting.Kind, dataset string, cfg trainer.Config, eps, delta float64) sigmaResult {
	n := trainSizes[dataset]
	tr := calibrate.Training{SamplingRate: cfg.SamplingRate(n), Steps: cfg.TotalSteps(n)}
	return r.calibrateSigma(k, tr.Event, eps, delta)
}

// syntheticShape is a stand-in for data set ds of the same shape (1,200
// examples of its features and classes, deterministic values in [0, 1)):
// a training step costs the same on it, so a plan needs no data on disk.
func syntheticShape(ds string) *data.Dataset {
	sh := shapes[ds]
	n, d := 1200, sh[0]
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32((i*7919)%1000) / 1000
	}
	y := make([]uint8, n)
	for i := range y {
		y[i] = uint8(i % sh[1])
	}
	return &data.Dataset{Name: ds + "/synthetic", X: x, Y: y, N: n, D: d, Classes: sh[1]}
}
