package accounting

import (
	"reflect"
	"strings"
	"testing"
)

// TestRandomAllocationJSON reads dp_accounting's RandomAllocationDpEvent
// (PR #414's fields event, num_selected, num_steps) and writes it back.
func TestRandomAllocationJSON(t *testing.T) {
	in := `{"module_name":"dp_accounting.dp_event","class_name":"RandomAllocationDpEvent","event":{"module_name":"dp_accounting.dp_event","class_name":"GaussianDpEvent","noise_multiplier":2},"num_selected":10,"num_steps":100}`
	e, err := UnmarshalEvent([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := RandomAllocation{NumSelected: 10, NumSteps: 100, Event: Gaussian{NoiseMultiplier: 2}}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("read %#v, want %#v", e, want)
	}
	out, err := MarshalEvent(e)
	if err != nil || string(out) != in {
		t.Fatalf("wrote %s (%v), want %s", out, err, in)
	}
}

// TestRandomAllocationNormalize checks the boundary rows and the bounded
// plan: k of t becomes k − r groups of ⌊t/k⌋ steps and r of ⌊t/k⌋ + 1.
func TestRandomAllocationNormalize(t *testing.T) {
	g := Gaussian{NoiseMultiplier: 2}
	p, err := NormalizeUnder(AddRemove, SelfComposed{Event: RandomAllocation{NumSelected: 3, NumSteps: 10, Event: g}, Count: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || p.Steps[0].Sampling != SamplingRandomAllocation || p.Steps[0].DatasetSize != 10 || p.Steps[0].SampleSize != 3 || p.Steps[0].Count != 5 {
		t.Fatalf("plan %+v", p.Steps)
	}
	b, err := p.Bounded()
	if err != nil {
		t.Fatal(err)
	}
	// 10 = 3·3 + 1: two groups of 3 steps and one of 4, per epoch.
	got := map[int]int{}
	for _, s := range b.Steps {
		if s.SampleSize != 1 {
			t.Fatalf("bounded step %+v", s)
		}
		got[s.DatasetSize] += s.Count
	}
	if !reflect.DeepEqual(got, map[int]int{3: 10, 4: 5}) {
		t.Errorf("groups %v, want 10 of 3 steps and 5 of 4", got)
	}
	// k = 0: free; k = t: t unsampled steps.
	if p, err := Normalize(RandomAllocation{NumSelected: 0, NumSteps: 10, Event: g}, 1); err != nil || len(p.Steps) != 0 {
		t.Errorf("k = 0: %+v, %v", p, err)
	}
	if p, err := Normalize(RandomAllocation{NumSelected: 4, NumSteps: 4, Event: g}, 1); err != nil || len(p.Steps) != 1 || p.Steps[0].Sampling != SamplingNone || p.Steps[0].Count != 4 {
		t.Errorf("k = t: %+v, %v", p, err)
	}
	for _, c := range []struct {
		e    Event
		adj  Adjacency
		want string
	}{
		{RandomAllocation{NumSelected: 11, NumSteps: 10, Event: g}, AddRemove, "num_selected"},
		{RandomAllocation{NumSelected: 1, NumSteps: 0, Event: g}, AddRemove, "num_steps"},
		{RandomAllocation{NumSelected: 1, NumSteps: 10, Event: g}, ReplaceOne, "add-remove"},
		{RandomAllocation{NumSelected: 1, NumSteps: 10, Event: PoissonSampled{SamplingRate: 0.5, Event: g}}, AddRemove, "nested sampling"},
	} {
		if _, err := NormalizeUnder(c.adj, c.e, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.e, err, c.want)
		}
	}
}
