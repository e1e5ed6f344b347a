// Package trainer trains multilayer perceptrons with differentially private
// SGD and its dropout/Langevin variants, and records every step's privacy
// cost in an [accounting.Ledger].
//
// # Model
//
// [MLP]: optional fixed input projection (PCA, computed once from the data:
// DP-PCA for private methods, Abadi et al. 2016 §4), hidden ReLU layers
// (He-normal init), softmax output with cross-entropy (Glorot-normal init).
// Parameters are float32; every matmul goes through [gemm.Sgemm] over a
// whole batch.
//
// # Private step (the pipeline of STYLE §13)
//
//  1. Sample a lot: Poisson with q = LotSize/N (default for private
//     methods), or shuffled fixed-size lots (an epoch of ⌊N/LotSize⌋ lots,
//     accounted under replace-one without amplification). A lot is
//     processed in batches of at most BatchSize examples.
//  2. Forward and backward pass over the batch, keeping each example's
//     pre-activation gradient rows g_{l,i}.
//  3. Per-example norm over ALL parameters without materialising
//     per-example gradients (Goodfellow 2015): example i's gradient for
//     dense layer l is (a_{l,i} g_{l,i}ᵀ, g_{l,i}), so its squared norm is
//     (‖a_{l,i}‖² + 1)·‖g_{l,i}‖²; summed over layers.
//  4. Factor f_i = min(1, C/(‖∇_i‖ + 1e-12)) (flat), or per layer
//     f_{l,i} = min(1, C_l/(‖∇_{l,i}‖ + 1e-12)).
//  5. Sum: scale the rows g_{l,i} by f_i (or f_{l,i}) and compute the weight
//     gradients with the same aᵀ·G matmul a non-private step does. The DP
//     step's extra work is O(batch·(D + units)).
//  6. Add N(0, (kσS)²) to every coordinate, S = C (flat) or √Σ C_l²
//     (per-layer), k = 1 for dpsgd and 2 for dpd/dpvd/sgld.
//  7. Divide by the expected lot size qN = LotSize and update.
//  8. Record PoissonSampled{q, Gaussian{kσ}} in the ledger, or for shuffled
//     lots Shuffled{N, LotSize, Gaussian{kσ/2}} once per epoch before its
//     first lot (see [Config.StepEvent] for why the DPD papers' "2C
//     sensitivity, 2Cσ noise" becomes σ_eff = 2σ under add/remove).
//
// The gradient buffer carries a state (empty → summed → noised → applied);
// noising or applying twice panics, so a gradient cannot be reused.
//
// # Randomness
//
// Initialisation, sampling and dropout draw from one ChaCha8 stream
// (math/rand/v2), seeded from crypto/rand unless Config.Seed is set. The
// gradient noise of a step is drawn from that stream too, indirectly: it
// supplies one 256-bit AES key per 32,768 coordinates, and each key's
// AES-256-CTR keystream feeds an exact ziggurat sampler (NoiseGenerator).
//
// # Budget, progress, checkpoints
//
// With Config.TargetEpsilon and Options.NewAccountant the run computes, by
// bisection over the step count with fresh accountants, the last step the
// budget allows, and stops before exceeding it; the whole ledger is
// re-checked at the end. Progress goes to Options.Progress once per epoch;
// the library never prints. Checkpoints ([Trainer.SaveCheckpoint],
// [LoadCheckpoint], [Resume]) are written atomically with a magic header,
// version, length and SHA-256, and carry the ledger, so a resumed run keeps
// every step already spent. Steps taken after the last checkpoint, whose
// outputs may already be released, are kept by the write-ahead ledger
// (Options.LedgerPath), written before every release and checkpoint; a
// resume continues from it, so steps redone after a crash are paid again
// (see [Trainer.Run]). With Options.RunID the ledger is a hash chain whose
// head every Progress carries ([accounting.Ledger.Covers] checks a later
// ledger against it); Options.Spent continues the ledger of a model lost
// before its first checkpoint. [LockOutput] keeps two runs off one path,
// [LockRun] off one run id wherever its files are, with the run's last
// ledger state recorded beside the lock ([RunLock.Mark]).
//
// # Audit
//
// With Config.Canaries = M the run audits itself (Steinke, Nasr and
// Jagielski 2023): M canaries ([CanaryInput] examples or [CanaryGradient]
// gradients) take slots N..N+M−1 of the training set, each present with
// probability ½ by a coin from its own stream (Config.CanarySeed). Lots
// are drawn over all N + M slots, so q = LotSize/(N+M) and the ledger does
// not depend on the coins; an absent canary drawn into a lot is dropped.
// After the last step the canaries are scored on the final model and
// Result.Audit holds the empirical lower bounds on ε of package
// calibrate/onerun at Options.ReportDelta.
//
// Nothing in this package is safe for concurrent use.
package trainer
