package accounting

// TruncatedSubsampledGaussian is the Gaussian mechanism on a capped Poisson
// sample (dp_accounting's TruncatedSubsampledGaussianDpEvent; Ganesh 2025,
// arXiv 2508.15089): each of DatasetSize records joins with probability
// SamplingRate, and when more than TruncatedBatchSize join, a uniformly
// random TruncatedBatchSize of them are kept; the Gaussian of
// NoiseMultiplier (relative to the sensitivity under the relation, as for
// [Gaussian]) runs on the kept records.
type TruncatedSubsampledGaussian struct {
	DatasetSize        int     `json:"dataset_size"`
	SamplingRate       float64 `json:"sampling_probability"`
	TruncatedBatchSize int     `json:"truncated_batch_size"`
	NoiseMultiplier    float64 `json:"noise_multiplier"`
}

func (TruncatedSubsampledGaussian) isEvent() {}
