package accounting_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dpcalc/dpcalc/accounting"
)

// TestBinomialMixtureJSON: a user mixture with a tail is written as
// dpcalc's BinomialMixtureOfGaussiansDpEvent (module "dpcalc": dp_accounting's
// MixtureOfGaussiansDpEvent has no tail, and reading it back as one would
// drop the shifts left out) and read back equal, as a DpEvent and in a
// composition ledger; one without a tail is still dp_accounting's class.
// Before, K 1000 was written as MixtureOfGaussiansDpEvent, the tail lost.
func TestBinomialMixtureJSON(t *testing.T) {
	ev, err := accounting.UserLevel(1, 0.0064, 1000, 782)
	if err != nil {
		t.Fatal(err)
	}
	b, err := accounting.MarshalEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"module_name":"dpcalc","class_name":"BinomialMixtureOfGaussiansDpEvent","standard_deviation":1,`) ||
		!strings.HasSuffix(string(b), `,"binomial_count":1000,"binomial_rate":0.0064},"count":782}`) {
		t.Errorf("K 1000: %.200s...%s", b, b[len(b)-80:])
	}
	back, err := accounting.UnmarshalEvent(b)
	if err != nil || !reflect.DeepEqual(back, ev) {
		t.Errorf("K 1000 read back: %v, %v", err, back == nil)
	}
	c, err := accounting.MarshalCompositions(accounting.Composed{Events: []accounting.Event{ev}}, accounting.AddRemove)
	if err != nil {
		t.Fatal(err)
	}
	r, err := accounting.ReadLedgerFile(context.Background(), "c.json", c, accounting.AddRemove)
	if err != nil || !reflect.DeepEqual(r.Event, ev) {
		t.Errorf("composition ledger: %v, %+v", err, r.Event)
	}
	two, _ := accounting.UserLevel(1, 0.0064, 2, 782)
	b2, _ := accounting.MarshalEvent(two)
	if !strings.Contains(string(b2), `{"module_name":"dp_accounting.dp_event","class_name":"MixtureOfGaussiansDpEvent"`) || strings.Contains(string(b2), "binomial") {
		t.Errorf("K 2: %s", b2)
	}
}
