// Package reproduce regenerates the published tables and figures of three
// papers — Abadi et al. 2016 (DP-SGD and the moments accountant), Ermis and
// Cemgil's Differentially Private Dropout (DPD) and Differentially Private
// Variational Dropout (DPVD) — with dpcalc's accountants and trainer, and
// writes each as Markdown and CSV with the paper's numbers beside ours.
//
// Every published number lives in paper.go with its citation; every other
// number in a table is computed. Each table carries notes saying what its
// columns mean and a verdict generated from the numbers.
//
// [Run] first writes the accounting tables and figures (no training), then
// calibrates σ for every training cell, plans the runs (estimating their
// wall time from a measured step), trains, and renders the training tables.
// Finished runs and accounting values are cached in OutDir/cache, one JSON
// file per value keyed by a hash of its full configuration (seed
// included), so a run is resumable and a repeated run recomputes nothing.
// Runs are deterministic given their seed (trainer.Config.Seed).
//
// Independent runs train on [Options.Workers] goroutines. To spread a
// reproduction over machines, each process runs one shard
// ([Options.Shard] of [Options.Shards]) into its own OutDir, and [Merge]
// builds the tables from the shards' caches (docs/reproduction-sharding.md).
//
// The library never prints: progress goes to [Options.Progress] and the
// plan to [Options.OnPlan]. Not safe for concurrent use on one OutDir.
package reproduce
