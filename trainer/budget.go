package trainer

import "github.com/dpcalc/dpcalc/accounting"

// RunEvent is the event of the whole configured run on n training examples:
// the DP-PCA release (if any) followed by TotalSteps(n) steps of
// [Config.StepEvent]. Calibrating σ against RunEvent with a budget (ε, δ)
// gives a run that completes all its epochs within the budget. c must be
// defaulted ([Config.WithDefaults]).
func (c Config) RunEvent(n int) accounting.Event {
	steps := accounting.SelfComposed{Event: c.StepEvent(n), Count: c.TotalSteps(n)}
	if pca := c.PCAEvent(); pca != nil {
		return accounting.Composed{Events: []accounting.Event{pca, steps}}
	}
	return steps
}
