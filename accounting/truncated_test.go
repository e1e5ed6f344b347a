package accounting

import (
	"errors"
	"reflect"
	"testing"
)

// TestTruncatedSubsampledGaussianJSON: dp_accounting's
// TruncatedSubsampledGaussianDpEvent in and out, with its field order
// (dataset_size, sampling_probability, truncated_batch_size,
// noise_multiplier), as dp_accounting's to_named_tuple writes it.
func TestTruncatedSubsampledGaussianJSON(t *testing.T) {
	const js = `{"module_name":"dp_accounting.dp_event","class_name":"TruncatedSubsampledGaussianDpEvent","dataset_size":4,"sampling_probability":0.5,"truncated_batch_size":2,"noise_multiplier":1}`
	e, err := UnmarshalEvent([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	want := TruncatedSubsampledGaussian{DatasetSize: 4, SamplingRate: 0.5, TruncatedBatchSize: 2, NoiseMultiplier: 1}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("read %#v, want %#v", e, want)
	}
	b, err := MarshalEvent(SelfComposed{Event: want, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"module_name":"dp_accounting.dp_event","class_name":"SelfComposedDpEvent","event":` + js + `,"count":3}`; string(b) != w {
		t.Errorf("wrote %s, want %s", b, w)
	}
}

// TestTruncatedNormalize: a truncated-Poisson step keeps its sizes; a cap
// at or above the data set size is Poisson sampling; a zero rate or cap
// releases nothing; bad sizes and rates name the field; it cannot sit
// below another sampling.
func TestTruncatedNormalize(t *testing.T) {
	p, err := Normalize(SelfComposed{Event: TruncatedSubsampledGaussian{DatasetSize: 60000, SamplingRate: 0.01, TruncatedBatchSize: 650, NoiseMultiplier: 4}, Count: 7}, 1)
	if err != nil || len(p.Steps) != 1 {
		t.Fatalf("%+v, %v", p, err)
	}
	s := p.Steps[0]
	if s.Sampling != SamplingTruncatedPoisson || s.Rate != 0.01 || s.DatasetSize != 60000 || s.SampleSize != 650 || s.Sigma != 4 || s.Count != 7 ||
		!reflect.DeepEqual(s.Event(), TruncatedSubsampledGaussian{DatasetSize: 60000, SamplingRate: 0.01, TruncatedBatchSize: 650, NoiseMultiplier: 4}) {
		t.Errorf("step %+v", s)
	}
	if p, err := Normalize(TruncatedSubsampledGaussian{DatasetSize: 10, SamplingRate: 0.1, TruncatedBatchSize: 10, NoiseMultiplier: 2}, 1); err != nil || p.Steps[0].Sampling != SamplingPoisson || p.Steps[0].Rate != 0.1 {
		t.Errorf("cap = N: %+v, %v; want a Poisson step", p, err)
	}
	for _, e := range []Event{
		TruncatedSubsampledGaussian{DatasetSize: 10, SamplingRate: 0, TruncatedBatchSize: 3, NoiseMultiplier: 2},
		TruncatedSubsampledGaussian{DatasetSize: 10, SamplingRate: 0.5, TruncatedBatchSize: 0, NoiseMultiplier: 2},
	} {
		if p, err := Normalize(e, 1); err != nil || !p.Empty() {
			t.Errorf("%#v: %+v, %v; want nothing released", e, p, err)
		}
	}
	for _, c := range []struct {
		e    Event
		name string
	}{
		{TruncatedSubsampledGaussian{DatasetSize: 0, SamplingRate: 0.5, TruncatedBatchSize: 1, NoiseMultiplier: 1}, "dataset_size"},
		{TruncatedSubsampledGaussian{DatasetSize: 5, SamplingRate: 1.5, TruncatedBatchSize: 1, NoiseMultiplier: 1}, "sampling_probability"},
		{TruncatedSubsampledGaussian{DatasetSize: 5, SamplingRate: 0.5, TruncatedBatchSize: -1, NoiseMultiplier: 1}, "truncated_batch_size"},
		{TruncatedSubsampledGaussian{DatasetSize: 5, SamplingRate: 0.5, TruncatedBatchSize: 2, NoiseMultiplier: -1}, "sigma"},
	} {
		var pe *ParamError
		if _, err := Normalize(c.e, 1); !errors.As(err, &pe) || pe.Name != c.name {
			t.Errorf("%#v: %v, want a ParamError naming %s", c.e, err, c.name)
		}
	}
	var ue *UnsupportedEventError
	if _, err := Normalize(PoissonSampled{SamplingRate: 0.5, Event: TruncatedSubsampledGaussian{DatasetSize: 5, SamplingRate: 0.5, TruncatedBatchSize: 2, NoiseMultiplier: 1}}, 1); !errors.As(err, &ue) {
		t.Errorf("sampled truncated step: %v, want unsupported", err)
	}
}
