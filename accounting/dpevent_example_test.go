package accounting_test

import (
	"fmt"

	"github.com/dpcalc/dpcalc/accounting"
)

// The JSON of dp_accounting's SelfComposedDpEvent(PoissonSampledDpEvent(
// 0.01, GaussianDpEvent(1.1)), 100).to_named_tuple(), as a dict.
func ExampleUnmarshalEvent() {
	e, err := accounting.UnmarshalEvent([]byte(`{"module_name": "dp_accounting.dp_event",
	  "class_name": "SelfComposedDpEvent", "count": 100, "event": {
	    "module_name": "dp_accounting.dp_event", "class_name": "PoissonSampledDpEvent",
	    "sampling_probability": 0.01, "event": {
	      "module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": 1.1}}}`))
	fmt.Println(e == accounting.SubsampledGaussian(1.1, 0.01, 100), err)
	_, err = accounting.UnmarshalEvent([]byte(`{"class_name": "PoissonSampledDpEvent", "sampling_rate": 0.01}`))
	fmt.Println(err)
	// Output:
	// true <nil>
	// accounting: event JSON at $ (PoissonSampledDpEvent): unknown field "sampling_rate" (PoissonSampledDpEvent has fields sampling_probability, event)
}

func ExampleMarshalEvent() {
	b, err := accounting.MarshalEvent(accounting.Composed{Events: []accounting.Event{
		accounting.Gaussian{NoiseMultiplier: 4},
		accounting.EpsilonDelta{Epsilon: 1, Delta: 1e-6},
	}})
	fmt.Println(string(b), err)
	// Output:
	// {"module_name":"dp_accounting.dp_event","class_name":"ComposedDpEvent","events":[{"module_name":"dp_accounting.dp_event","class_name":"GaussianDpEvent","noise_multiplier":4},{"module_name":"dp_accounting.dp_event","class_name":"EpsilonDeltaDpEvent","epsilon":1,"delta":1e-06}]} <nil>
}
