// Package calibrate inverts privacy accountants: it finds the noise
// multiplier σ that meets a budget (ε, δ), and the number of steps a budget
// allows for a given σ.
//
// There is one root finder, [Smallest], and every calibration goes through
// it. It expands a bracket from a guess, narrows it by Illinois-modified
// false position on log x with a bisection fallback, and returns the safe end
// of the bracket: the returned x has been evaluated and meets the target. An
// accountant that is not exactly monotone (grid effects) therefore never
// yields an unsafe answer; at worst a slightly conservative one.
package calibrate
